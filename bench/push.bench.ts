/**
 * Benchmark 6 (issue 19), `npm run bench -- push`: status pushed over Server-Sent Events against
 * polling. (1) Latency from a signed webhook reaching the host to the browser-side client holding
 * the new status, p50/p99: an SSE client on the stream route against a client polling the status
 * route at its `poll_interval_ms`. (2) Upstream `GET /v1/verify/{id}` while sessions wait, with
 * streams open and with polling clients. (3) Heap per open stream at 10,000 streams, in the host
 * process: growth per stream, and the module's share (minus an open response of the platform's own).
 * The sandbox and the host each run in their own process; the clients run here.
 */
import { get as httpGet, type IncomingMessage } from 'node:http';
import { signWebhook, webhookBody } from '../test/hardening/support/webhook-signer.js';
import type { ChildServer } from './lib/child-process.js';
import {
  apiOptions,
  forkHost,
  forkSandbox,
  PhoneNumbers,
  postJson,
  type BenchContext,
} from './lib/context.js';
import { fmt, percentile, verdict, type BenchTable } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';

const GOALS = { p99Ms: 100, heapBytesPerStream: 2048 } as const;
const OPEN_CONCURRENCY = 200;

/** One client connection of its own (no agent): an SSE stream or a held response. */
interface OpenStream {
  /** Resolves with the time (performance.now) the client first held `status`. */
  seen(status: string): Promise<number>;
  close(): void;
}

function openStream(url: string): Promise<OpenStream> {
  return new Promise((resolve, reject) => {
    const req = httpGet(
      url,
      { agent: false, headers: { accept: 'text/event-stream' } },
      (res: IncomingMessage) => {
        if (res.statusCode !== 200) {
          reject(new Error(`stream answered ${res.statusCode}`));
          res.resume();
          return;
        }
        const waiters = new Map<string, (at: number) => void>();
        const seenAt = new Map<string, number>();
        let buffer = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buffer += chunk;
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = block.split('\n').find((line) => line.startsWith('data: '));
            if (!data) continue;
            const status = (JSON.parse(data.slice(6)) as { status: string }).status;
            const at = performance.now();
            seenAt.set(status, at);
            waiters.get(status)?.(at);
          }
        });
        res.on('error', () => undefined);
        resolve({
          seen: (status) =>
            seenAt.has(status)
              ? Promise.resolve(seenAt.get(status)!)
              : new Promise((done) => waiters.set(status, done)),
          close: () => req.destroy(),
        });
      },
    );
    req.once('error', reject);
  });
}

async function inBatches<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += size)
    results.push(...(await Promise.all(items.slice(i, i + size).map(run))));
  return results;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function pushBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const samples = ctx.quick ? 100 : 300;
  const population = ctx.quick ? 2_000 : 10_000;
  const waitSeconds = ctx.quick ? 5 : 15;
  const sandbox = await forkSandbox({ demoAccount: { balance: 1_000_000_000 } });
  const servers: ChildServer[] = [sandbox];
  try {
    const sb = sandbox.ready;
    /** The measured host: streams uncapped, protection out of the way, sessions alive 10 minutes. */
    const streamingHost = (extra: Record<string, unknown> = {}): Promise<ChildServer<HostReady>> =>
      forkHost({
        platform: 'express',
        holdRoute: true,
        module: {
          api: apiOptions(sb),
          webhooks: { secret: sb.webhookSecret },
          limits: { enabled: false },
          statusStream: { maxPerClient: 1_000_000 },
          expirySeconds: 600,
          ...extra,
        },
      });
    const host: ChildServer<HostReady> = await streamingHost();
    servers.push(host);
    const base = host.ready.url;
    const phones = new PhoneNumbers();
    const start = async (): Promise<{ phone: string; id: string; pollMs: number }> => {
      const phone = phones.take();
      const res = await postJson(`${base}/verification/start`, {
        phone_number: phone,
        method: 'reverse_flash_call',
      });
      if (res.status !== 201) throw new Error(`start answered ${res.status}`);
      return { phone, id: res.body.verification_id as string, pollMs: res.body.poll_interval_ms as number };
    };
    /** The user calls, and the signed webhook the sandbox would send reaches the host: its send time. */
    const webhook = async (phone: string): Promise<number> => {
      const [data] = await sandbox.call<Record<string, unknown>[]>('verifyPhones', [phone]);
      const signed = signWebhook(sb.webhookSecret, webhookBody('verification.verified', data!));
      const sentAt = performance.now();
      const res = await fetch(`${base}/verification/webhooks`, {
        method: 'POST',
        headers: signed.headers,
        body: signed.body,
      });
      await res.text();
      if (res.status >= 300) throw new Error(`webhook answered ${res.status}`);
      return sentAt;
    };

    // (1) Latency, SSE: one session at a time, the stream open before the webhook.
    ctx.log(`push: latency over SSE (${samples} sessions)`);
    const sse: number[] = [];
    for (const session of await inBatches(Array.from({ length: samples }), 50, start)) {
      const stream = await openStream(`${base}/verification/status/${session.id}/events`);
      await stream.seen('sent');
      const sentAt = await webhook(session.phone);
      sse.push((await stream.seen('verified')) - sentAt);
      stream.close();
    }

    // (1) Latency, polling: every client polls at poll_interval_ms from a random phase; webhooks spread out.
    ctx.log(`push: latency with polling (${samples} sessions)`);
    const polled = await inBatches(Array.from({ length: samples }), 50, start);
    const polling = await Promise.all(
      polled.map(async (session, index) => {
        let verifiedAt: number | undefined;
        let stop = false;
        const poller = (async () => {
          await sleep(Math.random() * session.pollMs);
          while (!stop) {
            const res = await fetch(`${base}/verification/status/${session.id}`);
            const body = (await res.json()) as { status: string };
            if (body.status === 'verified') {
              verifiedAt = performance.now();
              return;
            }
            await sleep(session.pollMs);
          }
        })();
        await sleep(1000 + index * 10);
        const sentAt = await webhook(session.phone);
        await poller;
        stop = true;
        return verifiedAt! - sentAt;
      }),
    );

    // (2) Upstream GETs while sessions wait (webhooks configured: the reconciler polls lazily).
    ctx.log(`push: upstream GETs while waiting (${samples} sessions, ${waitSeconds} s)`);
    const waiting = await inBatches(Array.from({ length: samples }), 50, start);
    const streams = await inBatches(waiting, OPEN_CONCURRENCY, (s) =>
      openStream(`${base}/verification/status/${s.id}/events`),
    );
    await Promise.all(streams.map((s) => s.seen('sent')));
    await sandbox.call('resetRequestCounts');
    await sleep(waitSeconds * 1000);
    const sseGets = await sandbox.call<number>('requestCount', 'GET /v1/verify/:id');
    for (const s of streams) s.close();
    const waitingPolled = await inBatches(Array.from({ length: samples }), 50, start);
    await sandbox.call('resetRequestCounts');
    let statusPolls = 0;
    let stopPolling = false;
    const pollers = waitingPolled.map(async (s) => {
      await sleep(Math.random() * s.pollMs);
      while (!stopPolling) {
        await (await fetch(`${base}/verification/status/${s.id}`)).text();
        statusPolls++;
        await sleep(s.pollMs);
      }
    });
    await sleep(waitSeconds * 1000);
    stopPolling = true;
    const pollGets = await sandbox.call<number>('requestCount', 'GET /v1/verify/:id');
    await Promise.all(pollers);

    // (3) Heap per open stream, on a host of its own whose reconciler stays idle (1 h lazy interval):
    // its lazy polls of the 10,000 sessions would otherwise land in the middle of the measurement.
    ctx.log(`push: heap at ${population} open streams`);
    const quiet: ChildServer<HostReady> = await streamingHost({ reconcile: { lazyIntervalMs: 3_600_000 } });
    servers.push(quiet);
    const quietBase = quiet.ready.url;
    const sessions = await inBatches(Array.from({ length: population }), 100, async () => {
      const phone = phones.take();
      const res = await postJson(`${quietBase}/verification/start`, {
        phone_number: phone,
        method: 'reverse_flash_call',
      });
      return res.body.verification_id as string;
    });
    /** Heap growth per connection while `population` of `path(id)` are open, each settled after its first message. */
    const growthPerOpen = async (
      path: (id: string) => string,
      first: string | undefined,
    ): Promise<number> => {
      // Past one poll interval: the first answers' poll claims (the status route's cost, not the stream's) have lapsed.
      await sleep(2000);
      const before = await quiet.call<number>('heapUsed');
      const opened = await inBatches(sessions, OPEN_CONCURRENCY, async (id) => {
        const s = await openStream(`${quietBase}${path(id)}`);
        if (first) await s.seen(first);
        return s;
      });
      await sleep(2000);
      const during = await quiet.call<number>('heapUsed');
      for (const s of opened) s.close();
      await sleep(1000);
      return (during - before) / population;
    };
    const perHeld = await growthPerOpen(() => '/bench/hold', undefined);
    const perStream = await growthPerOpen((id) => `/verification/status/${id}/events`, 'sent');

    const moduleShare = perStream - perHeld;
    const sseP99 = percentile(sse, 99);
    return [
      {
        title: `6 (issue 19). Status pushed over SSE against polling (Express, reverse_flash_call, ${samples} sessions each)`,
        columns: ['measure', 'SSE', 'polling', 'goal', 'verdict'],
        rows: [
          [
            'webhook → client sees the status, p50 (ms)',
            fmt(percentile(sse, 50), 1),
            fmt(percentile(polling, 50), 1),
            '',
            '',
          ],
          [
            'webhook → client sees the status, p99 (ms)',
            fmt(sseP99, 1),
            fmt(percentile(polling, 99), 1),
            `SSE ≤ ${GOALS.p99Ms}`,
            verdict(sseP99 <= GOALS.p99Ms),
          ],
          [
            `status-route requests while ${samples} sessions wait ${waitSeconds} s`,
            0,
            statusPolls,
            'SSE: 0',
            verdict(true),
          ],
          [`upstream GETs while ${samples} sessions wait ${waitSeconds} s`, sseGets, pollGets, '', ''],
          [`heap per open stream at ${population} streams, total (bytes)`, fmt(perStream), '', '', ''],
          [`heap per open plain response of the host (bytes)`, fmt(perHeld), '', '', ''],
          [
            `heap per open stream, the module's share (bytes)`,
            fmt(moduleShare),
            '',
            `≤ ${GOALS.heapBytesPerStream}`,
            verdict(moduleShare <= GOALS.heapBytesPerStream),
          ],
        ],
        notes: [
          "Latency: from the moment the runner sends the signed webhook (as the sandbox would) to the moment the client has parsed the new status; it includes the webhook route's confirmation GET upstream, the store write, the host's listeners and the announcement.",
          "Polling: each client polls GET /status at the answer's poll_interval_ms (1500 ms for reverse_flash_call) from a random phase.",
          `Upstream GETs: webhooks configured, so the reconciler polls each session lazily (once per 15 s: the SSE column is exactly that, one GET per session, which the polling column contains too); the streams ask the API nothing themselves, polling clients cause one coalesced GET per session per poll interval.`,
          `Heap: settled heapUsed of the host process (after GC) with ${population} streams open, minus before, per stream ("total", Node's socket, parser, request and response objects included); "module's share" subtracts the same growth for ${population} open responses of a plain route of the host (GET /bench/hold: head written, never ended). One connection per stream (HTTP/1.1 cannot multiplex); file descriptor limit ${population * 2}+ needed on the machine (ulimit -n).`,
        ],
      },
    ];
  } finally {
    for (const server of servers.reverse()) await server.close();
  }
}
