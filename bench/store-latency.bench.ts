/**
 * Issue 45's row, the store's distance: start, check (a wrong code) and status (a pending session)
 * on RedisStore with Redis direct and behind a TCP proxy that delays every chunk by 1 and 2 ms each
 * way, one request at a time: the latency each distance adds. The sequential round trips a route waits
 * for are counted on the wire, 2 ms away: a trip starts when the store sends a command with none
 * outstanding and ends when none is; a route's trips are those that start and end between its request
 * and its answer. Added latency ÷ the PING's added round trip is shown beside: it also counts what each
 * trip costs whatever the distance (its payload through the proxy, the proxy's late timers). Beside
 * it, the routes' throughput on RedisStore (direct) over MemoryStore, with requests in flight, and
 * Redis bytes per pending session. In a fresh process (the sandbox and the host share it: their cost
 * is the same in every column).
 */
import { Redis } from 'ioredis';
import { VerificationSandbox } from '../src/testing/index.js';
import {
  forkDelayingProxy,
  runIsolated,
  startsHostConfig,
  PhoneNumbers,
  type BenchContext,
} from './lib/context.js';
import { startHostApp, type HostApp } from './lib/host-app.js';
import { fmt, median, verdict, type BenchTable } from './lib/report.js';

const DELAYS_MS = [1, 2] as const;
/** The distance whose trips are counted on the wire (its trips at least 2 × 2 ms apart). */
const COUNTED_AT = 'delay2';
const COUNTED_JOURNEYS = 30;
const ROUTES = ['start', 'check', 'status'] as const;
type Route = (typeof ROUTES)[number];
const GOAL: Record<Route, number> = { start: 4, check: 3, status: 2 };
const THROUGHPUT_GOAL = 0.8;
const IN_FLIGHT = 16;

export interface StoreLatencyArgs {
  redisUrl: string;
  requests: number;
}
export interface StoreLatencyResult {
  /** Median latency (ms) per route and target: `memory`, `direct`, `delay1`, `delay2`. */
  latency: Record<string, Record<Route, number>>;
  /** Requests per second with IN_FLIGHT in flight, per route, on MemoryStore and RedisStore. */
  throughput: Record<'memory' | 'redis', Record<Route, number>>;
  redisBytesPerSession: number;
  /** Median PING round trip (ms) to Redis direct and through each proxy: what the distance adds, measured. */
  pingMs: Record<string, number>;
  /** Median sequential round trips per route, counted on the wire (COUNTED_AT). */
  trips: Record<Route, number>;
}

/**
 * The store's ioredis client (`client`), counting round trips: one starts when a command is sent with
 * none outstanding, and ends when none is.
 */
class WireTrips {
  readonly client: Redis;
  private outstanding = 0;
  private readonly trips: { start: number; end?: number }[] = [];
  private idleWaiters: (() => void)[] = [];

  constructor(redis: Redis) {
    const call = (command: string, ...args: string[]): Promise<unknown> => {
      if (this.outstanding++ === 0) this.trips.push({ start: performance.now() });
      return redis.call(command, ...args).finally(() => {
        if (--this.outstanding > 0) return;
        this.trips.at(-1)!.end = performance.now();
        for (const wake of this.idleWaiters.splice(0)) wake();
      });
    };
    this.client = new Proxy(redis, {
      get: (target, property, receiver) =>
        property === 'call' ? call : (Reflect.get(target, property, receiver) as unknown),
    });
  }

  /** Resolves once no command is outstanding (the previous route's writes after its answer). */
  idle(): Promise<void> {
    return this.outstanding === 0 ? Promise.resolve() : new Promise((wake) => this.idleWaiters.push(wake));
  }

  /** The trips that started and ended between `from` and `to`: those a request waited for. */
  within(from: number, to: number): number {
    return this.trips.filter((t) => t.start >= from && t.end !== undefined && t.end <= to).length;
  }
}

export async function storeLatencyBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const args = { redisUrl: await ctx.redisUrl(), requests: ctx.quick ? 60 : 300 };
  const r = await runIsolated<StoreLatencyResult>('./store-latency.bench.js', 'runStoreLatency', args);
  const rows = ROUTES.map((route) => {
    const added = DELAYS_MS.map((d) => r.latency[`delay${d}`]![route] - r.latency.direct![route]);
    const rtt = DELAYS_MS.map((d) => r.pingMs[`delay${d}`]! - r.pingMs.direct!);
    return [
      route,
      fmt(r.latency.direct![route], 2),
      ...added.map((ms, i) => `${fmt(ms, 2)} (${fmt(ms / rtt[i]!, 1)} RTT)`),
      fmt(r.trips[route], 0),
      `≤ ${GOAL[route]}`,
      verdict(r.trips[route] <= GOAL[route]),
    ];
  });
  return [
    {
      title: `13 (issue 45). The store's distance: sequential round trips per route (RedisStore behind a delaying proxy, medians of ${args.requests} requests one at a time)`,
      columns: [
        'route',
        'direct ms',
        ...DELAYS_MS.map((d) => `added, ${d} ms away`),
        'round trips (wire)',
        'goal',
        '',
      ],
      rows,
      notes: [
        `Throughput, ${IN_FLIGHT} in flight, Redis ÷ Memory (goal ≥ ${THROUGHPUT_GOAL}): ${ROUTES.map(
          (route) => {
            const ratio = r.throughput.redis[route] / r.throughput.memory[route];
            return `${route} ${fmt(ratio, 2)} (${fmt(r.throughput.redis[route])} ÷ ${fmt(r.throughput.memory[route])} req/s) ${verdict(ratio >= THROUGHPUT_GOAL)}`;
          },
        ).join('; ')}.`,
        `PING round trip, median of 200: direct ${fmt(r.pingMs.direct!, 2)} ms, ${DELAYS_MS.map((d) => `${d} ms each way ${fmt(r.pingMs[`delay${d}`]!, 2)} ms`).join(', ')}; the proxies run in a process of their own.`,
        `Redis bytes per pending session (MEMORY USAGE of every key a start writes, over the starts): ${fmt(r.redisBytesPerSession)} B.`,
        'Default protection (pumping in monitor mode, the spend cap above what a round spends); a check is a wrong code; a status reads a pending session the API was asked about already.',
      ],
    },
  ];
}

/** Median round trip (ms) of a PING to Redis at `url`: what one store round trip costs there. */
async function pingOf(url: string): Promise<number> {
  const redis = new Redis(url);
  try {
    for (let i = 0; i < 20; i++) await redis.ping();
    const samples: number[] = [];
    for (let i = 0; i < 200; i++) {
      const started = performance.now();
      await redis.ping();
      samples.push(performance.now() - started);
    }
    return median(samples);
  } finally {
    redis.disconnect();
  }
}

async function request(url: string, method: 'GET' | 'POST', body: unknown, client: string) {
  const sent = performance.now();
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', 'x-bench-client': client },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const parsed = (await res.json()) as Record<string, unknown>;
  return { sent, ms: performance.now() - sent, status: res.status, body: parsed };
}

/**
 * One start, then the status (twice: the first asks the API) and a wrong code of its session: each
 * route's latency, or with `wire` each route's round trips (each request once the last one's writes are done).
 */
async function journey(
  host: HostApp,
  phones: PhoneNumbers,
  i: number,
  wire?: WireTrips,
): Promise<Record<Route, number>> {
  const client = `bench-${i}-${Math.random()}`;
  const json = async (...args: Parameters<typeof request>) => {
    await wire?.idle();
    const answer = await request(...args);
    return wire ? { ...answer, ms: wire.within(answer.sent, answer.sent + answer.ms) } : answer;
  };
  const start = await json(
    `${host.url}/verification/start`,
    'POST',
    { phone_number: phones.take(), method: 'sms' },
    client,
  );
  if (start.status !== 201) throw new Error(`start answered ${start.status}: ${JSON.stringify(start.body)}`);
  const id = String(start.body.verification_id);
  await json(`${host.url}/verification/status/${id}`, 'GET', undefined, client);
  const status = await json(`${host.url}/verification/status/${id}`, 'GET', undefined, client);
  const check = await json(
    `${host.url}/verification/check`,
    'POST',
    { verification_id: id, code: '0000' },
    client,
  );
  return { start: start.ms, status: status.ms, check: check.ms };
}

export async function runStoreLatency(args: StoreLatencyArgs): Promise<StoreLatencyResult> {
  const sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 1_000_000_000 } });
  const ready = {
    url: sb.url,
    apiKey: sb.demoAccount.apiKey,
    apiSecret: sb.demoAccount.apiSecret,
    webhookSecret: sb.demoAccount.webhookSecret,
  };
  const phones = new PhoneNumbers();
  const proxies = await Promise.all(DELAYS_MS.map((d) => forkDelayingProxy(args.redisUrl, d)));
  const targets: [string, string | undefined][] = [
    ['memory', undefined],
    ['direct', args.redisUrl],
    ...DELAYS_MS.map((d, i): [string, string] => [`delay${d}`, proxies[i]!.ready.url]),
  ];
  const latency: StoreLatencyResult['latency'] = {};
  const throughput = { memory: {}, redis: {} } as StoreLatencyResult['throughput'];
  let redisBytesPerSession = 0;
  const pingMs: Record<string, number> = {};
  let trips = { start: NaN, check: NaN, status: NaN };
  try {
    for (const [name, url] of targets) if (url) pingMs[name] = await pingOf(url);
    for (const [name, url] of targets) {
      const config = startsHostConfig(ready, url);
      const wire = name === COUNTED_AT ? new WireTrips(new Redis(url!)) : undefined;
      const host = await startHostApp(config, undefined, wire?.client);
      try {
        for (let i = 0; i < 10; i++) await journey(host, phones, i); // warm-up
        const samples: Record<Route, number[]> = { start: [], check: [], status: [] };
        for (let i = 0; i < args.requests; i++) {
          const one = await journey(host, phones, i);
          for (const route of ROUTES) samples[route].push(one[route]);
        }
        if (wire) {
          const counted: Record<Route, number[]> = { start: [], check: [], status: [] };
          for (let i = 0; i < COUNTED_JOURNEYS; i++) {
            const one = await journey(host, phones, i, wire);
            for (const route of ROUTES) counted[route].push(one[route]);
          }
          trips = {
            start: median(counted.start),
            check: median(counted.check),
            status: median(counted.status),
          };
        }
        latency[name] = {
          start: median(samples.start),
          check: median(samples.check),
          status: median(samples.status),
        };
        if (name === 'memory' || name === 'direct') {
          const perRoute: Record<Route, number[]> = { start: [], check: [], status: [] };
          let n = 0;
          await Promise.all(
            Array.from({ length: IN_FLIGHT }, async () => {
              while (n < args.requests) {
                const one = await journey(host, phones, n++);
                for (const route of ROUTES) perRoute[route].push(one[route]);
              }
            }),
          );
          // Per route: requests in flight over its median latency under that load.
          throughput[name === 'memory' ? 'memory' : 'redis'] = {
            start: (1000 * IN_FLIGHT) / median(perRoute.start),
            check: (1000 * IN_FLIGHT) / median(perRoute.check),
            status: (1000 * IN_FLIGHT) / median(perRoute.status),
          };
        }
        if (name === 'direct')
          redisBytesPerSession = await bytesPerStart(host, phones, args.redisUrl, config.redis!.keyPrefix);
      } finally {
        await host.close();
        wire?.client.disconnect();
      }
    }
  } finally {
    await Promise.all(proxies.map((p) => p.close()));
    await sb.close();
  }
  return { latency, throughput, redisBytesPerSession, pingMs, trips };
}

/** Redis bytes a start keeps: MEMORY USAGE of every key under a fresh prefix after 100 starts, per start. */
async function bytesPerStart(
  host: HostApp,
  phones: PhoneNumbers,
  redisUrl: string,
  prefix: string,
): Promise<number> {
  const admin = new Redis(redisUrl);
  try {
    const usage = async (): Promise<number> => {
      let total = 0;
      let cursor = '0';
      do {
        const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys)
          total += Number(await admin.call('MEMORY', 'USAGE', key, 'SAMPLES', '0')) || 0;
      } while (cursor !== '0');
      return total;
    };
    const before = await usage();
    const starts = 100;
    for (let i = 0; i < starts; i++)
      await request(
        `${host.url}/verification/start`,
        'POST',
        { phone_number: phones.take(), method: 'sms' },
        `bytes-${i}`,
      );
    return ((await usage()) - before) / starts;
  } finally {
    admin.disconnect();
  }
}
