/**
 * A load balancer in front of a deployment's webhook routes, for tests: each signed delivery from
 * the sandbox goes to one instance (the primary, whose answer goes back to the sandbox) and, as a
 * test wishes, byte-for-byte duplicates go to the others: at the same time, or once the primary
 * has answered. Every forwarded request and its answer is recorded.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Where one delivery goes. */
export interface FanoutPlan {
  /** Index of the target that answers the sandbox. */
  primary: number;
  /** Copies to every other target: none, together with the primary, or after its answer. */
  duplicates: 'none' | 'concurrent' | 'after';
}

export interface ForwardedAnswer {
  target: number;
  status: number;
  /** The webhook route's `result` on a 200, its `error_code` otherwise. */
  result: string | undefined;
  contentType: string | null;
}

export interface FannedDelivery {
  webhookId: string;
  event: string;
  requestId: string;
  headers: Record<string, string>;
  body: Buffer;
  plan: FanoutPlan;
  answers: ForwardedAnswer[];
}

const SIGNED_HEADERS = ['content-type', 'webhook-id', 'webhook-timestamp', 'webhook-signature'];

/** A small seeded PRNG (mulberry32): "random" placement that repeats run after run. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class WebhookFanout {
  readonly deliveries: FannedDelivery[] = [];

  private constructor(
    private readonly server: Server,
    /** The URL to give the sandbox as the account's webhook URL. */
    readonly url: string,
  ) {}

  /**
   * Listens on a free port. `targets` are the instances' webhook route URLs (read per delivery,
   * so a test may swap instances); `plan` places each delivery.
   */
  static async start(
    targets: () => string[],
    plan: (delivery: { webhookId: string; event: string; requestId: string }) => FanoutPlan,
  ): Promise<WebhookFanout> {
    const holder: { fanout?: WebhookFanout } = {};
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks);
        const headers: Record<string, string> = {};
        for (const name of SIGNED_HEADERS)
          if (typeof req.headers[name] === 'string') headers[name] = req.headers[name];
        const payload = JSON.parse(body.toString('utf8')) as { type: string; data: { request_id: string } };
        const identity = {
          webhookId: headers['webhook-id'],
          event: payload.type,
          requestId: payload.data.request_id,
        };
        const delivery: FannedDelivery = { ...identity, headers, body, plan: plan(identity), answers: [] };
        holder.fanout!.deliveries.push(delivery);
        fanOut(targets(), delivery)
          .then((primary) => {
            res.writeHead(primary.status, { 'content-type': 'application/json' }).end();
          })
          .catch(() => res.writeHead(502).end());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    holder.fanout = new WebhookFanout(server, `http://127.0.0.1:${port}/`);
    return holder.fanout;
  }

  /** Deliveries of one session, in arrival order. */
  of(requestId: string): FannedDelivery[] {
    return this.deliveries.filter((d) => d.requestId === requestId);
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }
}

/** Sends a recorded delivery to `target` again, unchanged (a load balancer's retry, or a replay). */
export async function forward(
  target: string,
  delivery: Pick<FannedDelivery, 'headers' | 'body'>,
): Promise<Omit<ForwardedAnswer, 'target'>> {
  const res = await fetch(target, { method: 'POST', headers: delivery.headers, body: delivery.body });
  const text = await res.text();
  const parsed = text ? (JSON.parse(text) as { result?: string; error_code?: string }) : {};
  return {
    status: res.status,
    result: res.status === 200 ? parsed.result : parsed.error_code,
    contentType: res.headers.get('content-type'),
  };
}

/** Forwards per the plan; resolves with the primary's answer once every copy was answered. */
async function fanOut(targets: string[], delivery: FannedDelivery): Promise<ForwardedAnswer> {
  const send = async (target: number): Promise<ForwardedAnswer> => {
    const answer = { target, ...(await forward(targets[target], delivery)) };
    delivery.answers.push(answer);
    return answer;
  };
  const others = targets.map((_, i) => i).filter((i) => i !== delivery.plan.primary);
  if (delivery.plan.duplicates === 'concurrent') {
    const [primary] = await Promise.all([send(delivery.plan.primary), ...others.map(send)]);
    return primary;
  }
  const primary = await send(delivery.plan.primary);
  if (delivery.plan.duplicates === 'after') await Promise.all(others.map(send));
  return primary;
}
