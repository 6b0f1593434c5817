import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One webhook request as it went over the wire: enough to replay it byte for byte. */
export interface RecordedWebhook {
  headers: Record<string, string>;
  body: Buffer;
  status: number;
}

/**
 * A pass-through between the sandbox and the host app that keeps a copy of every webhook request
 * (headers and raw bytes), so a test can replay a delivery exactly as an attacker who captured it would.
 */
export class WebhookRecorder {
  readonly recorded: RecordedWebhook[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<WebhookRecorder> {
    const recorder: { current?: WebhookRecorder } = {};
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const name of ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'])
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        fetch(target + (req.url ?? '/'), { method: 'POST', headers, body })
          .then(async (answer) => {
            const text = await answer.text();
            recorder.current!.recorded.push({ headers, body, status: answer.status });
            res.writeHead(answer.status, { 'content-type': 'application/json' }).end(text);
          })
          .catch(() => res.writeHead(502).end());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    recorder.current = new WebhookRecorder(server, `http://127.0.0.1:${port}`);
    return recorder.current;
  }

  /** Sends a recorded request again, unchanged. */
  async replay(
    target: string,
    webhook: RecordedWebhook,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(target, { method: 'POST', headers: webhook.headers, body: webhook.body });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}
