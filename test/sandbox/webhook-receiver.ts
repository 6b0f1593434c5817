import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local HTTP server that records the webhooks it receives and answers with scripted statuses. */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  /** Statuses to answer with, in order; 200 once they run out. */
  readonly script: number[] = [];
  /** When true, requests get no answer at all (the sender's time-out fires). */
  hang = false;

  /** `http://127.0.0.1:<port>/hooks`, set once listening. */
  url = '';

  private readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      if (this.hang) return;
      res.writeHead(this.script.shift() ?? 200).end();
    });
  });

  private constructor() {}

  static async start(): Promise<WebhookReceiver> {
    const receiver = new WebhookReceiver();
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    const { port } = receiver.server.address() as AddressInfo;
    receiver.url = `http://127.0.0.1:${port}/hooks`;
    return receiver;
  }

  /** Parsed bodies, in arrival order. */
  events(): { type: string; data: Record<string, unknown> }[] {
    return this.received.map((r) => JSON.parse(r.body));
  }

  clear(): void {
    this.received.length = 0;
    this.script.length = 0;
    this.hang = false;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
