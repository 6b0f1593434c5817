/**
 * Benchmark 3 (and issue 6's route rows): start, status and check throughput through the client
 * routes with protection on (default limits; the per-client key is a header, one client per
 * request, so the limits are evaluated on every request without refusing it), on MemoryStore and
 * on RedisStore, in one run. Each round: starts (unique phones) → status polls of those sessions
 * (coalescing on) → checks with the right codes (each session once). Fastify host.
 * `BENCH_AB_TREE=<dist-bench of another tree>` adds that tree's two hosts (its module, this harness) to
 * the same rounds, the order rotating, as the webhooks and proxy benchmarks do.
 */
import type { ChildServer } from './lib/child-process.js';
import { forkHost, forkSandbox, PhoneNumbers, startsHostConfig, type BenchContext } from './lib/context.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { fmt, median, type BenchTable } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';

const CONNECTIONS = 50;
const REDIS_GOAL = 0.8;
type StoreName = 'memory' | 'redis';
/** A host: its store, on this tree or (`-ab`) on BENCH_AB_TREE. */
type HostKey = StoreName | `${StoreName}-ab`;
const storeOf = (key: HostKey): StoreName => (key.startsWith('redis') ? 'redis' : 'memory');
type Route = 'start' | 'status' | 'statusAll' | 'check';
const ROUTES: Route[] = ['start', 'status', 'statusAll', 'check'];
const LABELS: Record<Route, string> = {
  start: 'POST /start',
  status: 'GET /status/:id (100 sessions)',
  statusAll: 'GET /status/:id (every session of the round)',
  check: 'POST /check (right code)',
};
/** Sessions the browsers of the first status row poll (benchmark 2's shape: mostly coalesced). */
const POLLED_SESSIONS = 100;

export async function routesBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const sandbox = await forkSandbox({ demoAccount: { balance: 1_000_000_000 } });
  const servers: ChildServer[] = [sandbox];
  try {
    const redisUrl = await ctx.redisUrl();
    const config = (store: StoreName) =>
      startsHostConfig(sandbox.ready, store === 'redis' ? redisUrl : undefined);
    // BENCH_AB_TREE: that tree's hosts (its module, this harness) beside this tree's, in the same rounds.
    const other = process.env.BENCH_AB_TREE;
    const keys: HostKey[] = other ? ['memory', 'redis', 'memory-ab', 'redis-ab'] : ['memory', 'redis'];
    const hosts = {} as Record<HostKey, ChildServer<HostReady>>;
    for (const key of keys) {
      hosts[key] = await forkHost(config(storeOf(key)), undefined, key.endsWith('-ab') ? other : undefined);
      servers.push(hosts[key]);
    }
    const phones = new PhoneNumbers();
    let client = 0;

    const round = async (store: HostKey): Promise<Record<Route, LoadResult>> => {
      const url = hosts[store].ready.url;
      const started = new Map<string, string>(); // phone → handle
      const start = await runLoad({
        url: `${url}/verification/start`,
        connections: CONNECTIONS,
        durationSec: ctx.roundSeconds,
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => ({
              ...req,
              headers: { 'content-type': 'application/json', 'x-bench-client': `c${client++}` },
              body: JSON.stringify({ phone_number: phones.take(), method: 'sms' }),
            }),
            onResponse: (status, body) => {
              if (status !== 201) return;
              const parsed = JSON.parse(body) as { phone_number: string; verification_id: string };
              started.set(parsed.phone_number, parsed.verification_id);
            },
          },
        ],
      });
      const handles = [...started.values()];
      if (handles.length === 0)
        throw new Error(`no start succeeded on ${store}: ${JSON.stringify(start.statusCodes)}`);
      const polls = (sessions: string[]): Promise<LoadResult> => {
        let next = 0;
        return runLoad({
          url: `${url}/verification/status/${sessions[0]}`,
          connections: CONNECTIONS,
          durationSec: ctx.roundSeconds,
          requests: [
            {
              method: 'GET',
              setupRequest: (req) => ({
                ...req,
                path: `/verification/status/${sessions[next++ % sessions.length]}`,
                headers: { 'x-bench-client': `c${client++}` },
              }),
            },
          ],
        });
      };
      const status = await polls(handles.slice(0, POLLED_SESSIONS));
      const statusAll = await polls(handles);
      const codes = await sandbox.call<Record<string, string>>('deliverCodes', [...started.keys()]);
      const pairs = [...started]
        .filter(([phone]) => codes[phone])
        .map(([phone, handle]) => ({ handle, code: codes[phone]! }));
      let nextPair = 0;
      // Each session is checked once (the right code verifies it): the round ends when they are used up.
      const check = await runLoad({
        url: `${url}/verification/check`,
        // autocannon refuses more connections than requests (a slow round may start fewer sessions).
        connections: Math.min(CONNECTIONS, pairs.length),
        durationSec: 600,
        amount: pairs.length,
        requests: [
          {
            method: 'POST',
            setupRequest: (req) => {
              const pair = pairs[nextPair++ % pairs.length]!;
              return {
                ...req,
                headers: { 'content-type': 'application/json', 'x-bench-client': `c${client++}` },
                body: JSON.stringify({ verification_id: pair.handle, code: pair.code }),
              };
            },
          },
        ],
      });
      return { start, status, statusAll, check };
    };

    for (const store of keys) {
      await runLoad({
        url: `${hosts[store].ready.url}/verification/methods`,
        connections: CONNECTIONS,
        durationSec: 1,
      });
    }
    const results = Object.fromEntries(keys.map((key) => [key, []])) as unknown as Record<
      HostKey,
      Record<Route, LoadResult>[]
    >;
    for (let r = 0; r < ctx.rounds; r++)
      for (let k = 0; k < keys.length; k++) {
        const store = keys[(k + r) % keys.length]!;
        const result = await round(store);
        results[store].push(result);
        ctx.log(
          `routes round ${r + 1} ${store}: ${ROUTES.map((route) => `${route} ${fmt(result[route].okRps)}/s`).join(', ')}`,
        );
      }

    const med = (store: HostKey, route: Route, key: 'okRps' | 'p50' | 'p99'): number =>
      median(results[store].map((r) => r[route][key]));
    const rows = ROUTES.flatMap((route) => {
      return keys.map((store) => {
        const memory = store.endsWith('-ab') ? 'memory-ab' : 'memory';
        const ratio = med(store, route, 'okRps') / med(memory, route, 'okRps');
        const unexpected = results[store].reduce(
          (n, r) =>
            n +
            r[route].errors +
            Object.entries(r[route].statusCodes)
              .filter(([s]) => Number(s) >= 500)
              .reduce((m, [, c]) => m + c, 0),
          0,
        );
        return [
          LABELS[route],
          `${storeOf(store) === 'memory' ? 'MemoryStore' : 'RedisStore'}${store.endsWith('-ab') ? ` (${other})` : ''}`,
          fmt(med(store, route, 'okRps')),
          fmt(med(store, route, 'p50'), 2),
          fmt(med(store, route, 'p99'), 2),
          storeOf(store) === 'redis' ? fmt(ratio, 2) : '',
          storeOf(store) === 'redis' ? `≥ ${REDIS_GOAL}` : '',
          storeOf(store) === 'redis' ? ratio >= REDIS_GOAL && unexpected === 0 : undefined,
          unexpected,
        ];
      });
    });
    return [
      {
        title: `3. Start, status and check throughput with protection on, MemoryStore vs RedisStore (Fastify, ${CONNECTIONS} connections, medians of ${ctx.rounds} × ${ctx.roundSeconds} s)`,
        columns: [
          'route',
          'store',
          'ok req/s',
          'p50 ms',
          'p99 ms',
          'Redis / Memory',
          'goal',
          'result',
          '5xx/errors',
        ],
        rows,
        notes: [
          'Protection on with its defaults (per-client and per-phone start limits, resend cooldown, duplicate-start coalescing, per-client check limit); `limits.key` reads a header that is unique per request, and every start uses a new phone number, so each request is evaluated and none is refused.',
          `Status polls (coalescing on) cycle over ${POLLED_SESSIONS} of the round's sessions, like the browsers of table 2 (nearly every poll is served from the store), then over every session of the round (a few thousand, each polled about twice per interval, so a large share refresh from the API). Checks send the right code once per session (sms, delivered through the sandbox): each ends in \`verified\` and an event.`,
          'RedisStore: a throwaway local redis-server (or REDIS_URL), one connection per host.',
          ...(other
            ? [
                `Other tree ÷ this tree, ok req/s (medians): ${ROUTES.flatMap((route) =>
                  (['memory', 'redis'] as StoreName[]).map(
                    (store) =>
                      `${LABELS[route]} ${store} ${fmt(med(`${store}-ab`, route, 'okRps') / med(store, route, 'okRps'), 2)}`,
                  ),
                ).join('; ')}.`,
              ]
            : []),
        ],
      },
    ];
  } finally {
    for (const s of servers.reverse()) await s.close();
  }
}
