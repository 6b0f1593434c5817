/**
 * Benchmark 2, status coalescing: N browsers poll M sessions every 200 ms for a window of the
 * sandbox's clock (frozen, moved in 20 ms steps, so the browsers' polls are spread over each
 * 200 ms). A counting relay between the module and the sandbox counts the upstream GETs of each
 * session: the goal is at most one per session per poll interval. Runs in one fresh process
 * (runIsolated): sandbox, relay, host app and browsers share the sandbox's clock.
 */
import http from 'node:http';
import { pollIntervalMs } from '../src/core/verification-method.js';
import { VerificationSandbox } from '../src/testing/index.js';
import { PhoneNumbers, runIsolated, type BenchContext } from './lib/context.js';
import { startHostApp } from './lib/host-app.js';
import { fmt, type BenchTable } from './lib/report.js';

export interface CoalescingArgs {
  browsers: number;
  sessions: number;
  pollEveryMs: number;
  windowMs: number;
}

export interface CoalescingResult {
  browserRequests: number;
  non200: number;
  upstreamGets: number;
  perSessionPerInterval: { mean: number; max: number };
  byMethod: Record<string, { sessions: number; intervalMs: number; maxPerInterval: number }>;
  wallSeconds: number;
}

const STEP_MS = 20;

export async function coalescingBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const args: CoalescingArgs = ctx.quick
    ? { browsers: 200, sessions: 20, pollEveryMs: 200, windowMs: 10_000 }
    : { browsers: 1000, sessions: 100, pollEveryMs: 200, windowMs: 30_000 };
  const r = await runIsolated<CoalescingResult>('./coalescing.bench.js', 'runCoalescing', args);
  const rows = Object.entries(r.byMethod).map(([method, m]) => [
    method,
    m.sessions,
    `${m.intervalMs} ms`,
    fmt(m.maxPerInterval, 2),
    '≤ 1',
    m.maxPerInterval <= 1,
  ]);
  rows.push([
    'all sessions',
    args.sessions,
    '',
    fmt(r.perSessionPerInterval.max, 2),
    '≤ 1',
    r.perSessionPerInterval.max <= 1 && r.non200 === 0,
  ]);
  return [
    {
      title: `2. Coalescing: ${fmt(args.browsers)} browsers polling ${args.sessions} sessions every ${args.pollEveryMs} ms for ${args.windowMs / 1000} s of the sandbox's clock`,
      columns: [
        'sessions',
        'count',
        'poll interval',
        'upstream GETs per session per interval (max)',
        'goal',
        'result',
      ],
      rows,
      notes: [
        `${fmt(r.browserRequests)} browser requests (${r.non200} not 200), ${fmt(r.upstreamGets)} upstream GETs in total (mean ${fmt(r.perSessionPerInterval.mean, 2)} per session per interval), counted per session by a relay in front of the sandbox; reconciler on, webhooks off; Fastify host, MemoryStore.`,
        `Wall time ${fmt(r.wallSeconds, 1)} s for the simulated window.`,
      ],
    },
  ];
}

/** The isolated part (see runIsolated). */
export async function runCoalescing(args: CoalescingArgs): Promise<CoalescingResult> {
  const sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
  const relay = await countingRelay(sb.url);
  const host = await startHostApp(
    {
      platform: 'fastify',
      module: {
        api: { baseUrl: relay.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        limits: { enabled: false },
      },
    },
    () => sb.now(),
  );
  const agent = new http.Agent({ keepAlive: true, maxSockets: 100 });
  try {
    const phones = new PhoneNumbers();
    const handles: { id: string; method: string }[] = [];
    for (let i = 0; i < args.sessions; i++) {
      const method = i % 2 === 0 ? 'sms' : 'reverse_flash_call';
      const res = await request(agent, `${host.url}/verification/start`, 'POST', {
        phone_number: phones.take(),
        method,
      });
      if (res.status !== 201) throw new Error(`start answered ${res.status}`);
      handles.push({ id: (JSON.parse(res.body) as { verification_id: string }).verification_id, method });
    }
    relay.reset();
    const started = Date.now();
    const phases = args.pollEveryMs / STEP_MS;
    let browserRequests = 0;
    let non200 = 0;
    for (let elapsed = 0; elapsed < args.windowMs; elapsed += STEP_MS) {
      const phase = (elapsed / STEP_MS) % phases;
      const polls: Promise<void>[] = [];
      for (let b = phase; b < args.browsers; b += phases) {
        const session = handles[b % args.sessions]!;
        polls.push(
          request(agent, `${host.url}/verification/status/${session.id}`, 'GET').then((res) => {
            browserRequests++;
            if (res.status !== 200) non200++;
          }),
        );
      }
      await Promise.all(polls);
      await sb.advance(STEP_MS);
    }
    const wallSeconds = (Date.now() - started) / 1000;
    const counts = relay.counts();
    const byMethod: CoalescingResult['byMethod'] = {};
    let max = 0;
    let sum = 0;
    let intervalsTotal = 0;
    const requestIds = [...counts.keys()];
    // The relay knows request ids, the browsers know handles: match them by the session's method via the sandbox.
    for (const requestId of requestIds) {
      const method = sb.getSession(requestId)?.method ?? 'unknown';
      const intervalMs = pollIntervalMs(method as 'sms');
      const intervals = Math.ceil(args.windowMs / intervalMs);
      const perInterval = counts.get(requestId)! / intervals;
      const entry = (byMethod[method] ??= { sessions: 0, intervalMs, maxPerInterval: 0 });
      entry.sessions++;
      entry.maxPerInterval = Math.max(entry.maxPerInterval, perInterval);
      max = Math.max(max, perInterval);
      sum += counts.get(requestId)!;
      intervalsTotal += intervals;
    }
    return {
      browserRequests,
      non200,
      upstreamGets: sum,
      perSessionPerInterval: { mean: sum / intervalsTotal, max },
      byMethod,
      wallSeconds,
    };
  } finally {
    agent.destroy();
    await host.close();
    await relay.close();
    await sb.close();
  }
}

/** Forwards everything to the sandbox and counts `GET /v1/verify/{id}` per id. */
async function countingRelay(upstream: string) {
  const target = new URL(upstream);
  const agent = new http.Agent({ keepAlive: true });
  let counts = new Map<string, number>();
  const server = http.createServer((req, res) => {
    const match = req.method === 'GET' ? /^\/v1\/verify\/([^/?]+)$/.exec(req.url ?? '') : null;
    if (match) counts.set(match[1]!, (counts.get(match[1]!) ?? 0) + 1);
    const forward = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (upstreamRes) => {
        res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
        upstreamRes.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    counts: () => counts,
    reset: () => {
      counts = new Map();
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      agent.destroy();
    },
  };
}

function request(
  agent: http.Agent,
  url: string,
  method: 'GET' | 'POST',
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      url,
      { method, agent, headers: payload ? { 'content-type': 'application/json' } : {} },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
