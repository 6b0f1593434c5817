/**
 * Benchmark 1, proxy overhead: `GET /verification/status/:id` of a pending session with coalescing
 * off (every call reaches the sandbox) against the sandbox's own `GET /v1/verify/{id}` and a
 * minimal node:http proxy doing the same hop. Each server is its own process; the runner is the
 * load generator. Rounds interleave the targets, in an order drawn for each round, so that drift hits
 * them alike. Every target but the sandbox runs as PROCESSES processes, round r on the (r mod
 * PROCESSES)th: two processes of one build differ by up to 10 % in throughput and by milliseconds in p99
 * for their whole lives (bench/README.md, compare-status), so one process per target made a figure one
 * process's luck.
 * `BENCH_AB_TREE=<dist-bench of another tree>` adds the module as that tree compiled it, on both
 * platforms, to the same rounds (its processes beside this tree's): a before/after in one run.
 */
import http from 'node:http';
import type { ChildServer } from './lib/child-process.js';
import {
  apiOptions,
  basicAuth,
  forkHost,
  forkMinimalProxy,
  forkPlatformFloor,
  forkSandbox,
  PhoneNumbers,
  postJson,
  type BenchContext,
} from './lib/context.js';
import type { Platform } from './lib/host-app.js';
import { runLoad, runPaced, summarise, type LoadResult } from './lib/load.js';
import { mulberry32, shuffled } from './lib/random.js';
import { fmt, median, type BenchTable } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';
import type { SandboxReady } from './servers/sandbox-process.js';

const CONNECTIONS = 50;
/** Throughput goals relative to the minimal proxy, per platform. */
const THROUGHPUT_GOAL: Record<Platform, number> = { fastify: 0.7, express: 0.5 };
const ADDED_P99_GOAL_MS = 2;
/** Length of one target's turn in the latency rounds. */
const SLICE_SEC = 0.5;
/** Processes per target (the sandbox aside); a figure is the median over rounds that use them in turn. */
const PROCESSES = 3;

type FloorName = 'floor-express' | 'floor-fastify';
/** The module on each platform, and as BENCH_AB_TREE compiled it (another tree, side by side in one run). */
type ModuleName = Platform | 'express-ab' | 'fastify-ab';
type TargetName = 'sandbox' | 'proxy' | FloorName | ModuleName;
const AB_TREE = process.env.BENCH_AB_TREE;
const LABEL: Record<TargetName, string> = {
  sandbox: 'sandbox GET /v1/verify/{id} (direct)',
  proxy: 'minimal node:http proxy (same hop)',
  'floor-express': 'bare Nest route on Express (same hop, no module)',
  'floor-fastify': 'bare Nest route on Fastify (same hop, no module)',
  express: 'module on Express',
  fastify: 'module on Fastify',
  'express-ab': `module on Express, ${AB_TREE}`,
  'fastify-ab': `module on Fastify, ${AB_TREE}`,
};
const FLOOR_OF: Record<Platform, FloorName> = { express: 'floor-express', fastify: 'floor-fastify' };
const MODULES: readonly ModuleName[] = ['express', 'fastify', 'express-ab', 'fastify-ab'];
const isModule = (target: TargetName): target is ModuleName => MODULES.includes(target as ModuleName);
const platformOf = (module: ModuleName): Platform => (module.startsWith('express') ? 'express' : 'fastify');
const emptyByTarget = <T>(): Record<TargetName, T[]> => ({
  sandbox: [],
  proxy: [],
  'floor-express': [],
  'floor-fastify': [],
  express: [],
  fastify: [],
  'express-ab': [],
  'fastify-ab': [],
});

export async function proxyBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const sandbox = await forkSandbox();
  const servers: ChildServer[] = [sandbox];
  try {
    const sb = sandbox.ready;
    /** One process of each target but the sandbox. */
    interface Copy {
      proxy: ChildServer<{ url: string }>;
      hosts: Partial<Record<ModuleName, ChildServer<HostReady>>>;
      floors: Record<FloorName, ChildServer<{ url: string }>>;
    }
    const copies: Copy[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      const copy: Copy = {
        proxy: await forkMinimalProxy(sb),
        hosts: {
          express: await forkHost(hostConfig('express', sb)),
          fastify: await forkHost(hostConfig('fastify', sb)),
          ...(AB_TREE && {
            'express-ab': await forkHost(hostConfig('express', sb), undefined, AB_TREE),
            'fastify-ab': await forkHost(hostConfig('fastify', sb), undefined, AB_TREE),
          }),
        },
        floors: {
          'floor-express': await forkPlatformFloor('express', sb),
          'floor-fastify': await forkPlatformFloor('fastify', sb),
        },
      };
      copies.push(copy);
      servers.push(
        copy.proxy,
        ...Object.values(copy.hosts).filter((h) => h !== undefined),
        ...Object.values(copy.floors),
      );
    }
    const phones = new PhoneNumbers();
    // Each round's order is drawn (seeded, so that a run can be repeated): with one order rotated for the
    // whole run, each target always followed the same one, and an A/A run (one tree in both module rows)
    // differed by 2x in added p99 (bench/README.md).
    const order = mulberry32(17);
    const targets: TargetName[] = [
      'sandbox',
      'proxy',
      'floor-express',
      'floor-fastify',
      'express',
      'fastify',
      ...(AB_TREE ? (['express-ab', 'fastify-ab'] as const) : []),
    ];

    /**
     * A fresh pending session per round (sessions expire after 10 minutes), addressed per target, on
     * the round's processes.
     */
    const freshUrls = async (round: number): Promise<Record<TargetName, string>> => {
      const { proxy, hosts, floors } = copies[round % PROCESSES]!;
      const direct = await postJson(
        `${sb.url}/v1/verify`,
        { phone_number: phones.take(), method: 'sms', expiry_seconds: 600 },
        { authorization: basicAuth(sb.apiKey, sb.apiSecret) },
      );
      const requestId = direct.body.request_id as string;
      /** The status URL of a session started on the module's host ('' when it has none: no BENCH_AB_TREE). */
      const statusUrl = async (module: ModuleName): Promise<string> => {
        const host = hosts[module];
        if (!host) return '';
        const res = await postJson(`${host.ready.url}/verification/start`, {
          phone_number: phones.take(),
          method: 'sms',
        });
        if (res.status !== 201) throw new Error(`start on ${module} answered ${res.status}`);
        return `${host.ready.url}/verification/status/${res.body.verification_id as string}`;
      };
      return {
        sandbox: `${sb.url}/v1/verify/${requestId}`,
        proxy: `${proxy.ready.url}/status/${requestId}`,
        'floor-express': `${floors['floor-express'].ready.url}/status/${requestId}`,
        'floor-fastify': `${floors['floor-fastify'].ready.url}/status/${requestId}`,
        express: await statusUrl('express'),
        fastify: await statusUrl('fastify'),
        'express-ab': await statusUrl('express-ab'),
        'fastify-ab': await statusUrl('fastify-ab'),
      };
    };
    const headersFor = (target: TargetName): Record<string, string> | undefined =>
      target === 'sandbox' ? { authorization: basicAuth(sb.apiKey, sb.apiSecret) } : undefined;

    // Warm-up of every process: JIT, keep-alive pools, the module's first paths.
    for (let copy = 0; copy < PROCESSES; copy++) {
      const warm = await freshUrls(copy);
      for (const target of targets)
        if (copy === 0 || target !== 'sandbox')
          await runLoad({
            url: warm[target],
            headers: headersFor(target),
            connections: CONNECTIONS,
            durationSec: 2,
          });
    }

    const saturated = emptyByTarget<LoadResult>();
    const upstreamPerRequest: Record<ModuleName, number[]> = {
      express: [],
      fastify: [],
      'express-ab': [],
      'fastify-ab': [],
    };
    for (let round = 0; round < ctx.rounds; round++) {
      const urls = await freshUrls(round);
      for (const target of shuffled(targets, order)) {
        const before = await sandbox.call<number>('requestCount', 'GET /v1/verify/:id');
        const result = await runLoad({
          url: urls[target],
          headers: headersFor(target),
          connections: CONNECTIONS,
          durationSec: ctx.roundSeconds,
        });
        const upstream = (await sandbox.call<number>('requestCount', 'GET /v1/verify/:id')) - before;
        if (isModule(target)) upstreamPerRequest[target].push(upstream / result.responses);
        saturated[target].push(result);
        ctx.log(`proxy round ${round + 1}: ${target} ${fmt(result.rps)} req/s, p99 ${fmt(result.p99, 2)} ms`);
      }
    }

    // Latency at one fixed, unsaturated rate for every target: what the module adds per request.
    const slowest = Math.min(...targets.map((t) => median(saturated[t].map((r) => r.rps))));
    const rate = Math.max(100, Math.round((slowest * 0.4) / 100) * 100);
    // Each round runs every target in short slices, the round's drawn order rotating slice by slice, so
    // that a slow moment of the machine (a collector, another process) lands on every target alike; a
    // target's p99 in the round is taken over all its slices. A target comes back every
    // SLICE_SEC × (targets − 1), 3.5 s at most (eight targets with BENCH_AB_TREE), within every server's
    // keep-alive timeout (Node's 5 s): its connections stay warm.
    // Every process starts the paced rounds collected, so that garbage the saturated rounds left (more
    // of it in a process that allocates more per request) is not collected during a paced slice.
    // (An earlier tree's host, BENCH_MODULE_TREE, knows only `heapUsed`, which collects the same way.)
    await Promise.all(servers.map((s) => s.call('collectGarbage').catch(() => s.call('heapUsed'))));
    const paced = emptyByTarget<LoadResult>();
    const agents = Object.fromEntries(
      targets.map((t) => [t, new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS })]),
    ) as Record<TargetName, http.Agent>;
    /** One target at the even rate for `durationSec`, on its warm pool; recorded into `samples` when given. */
    const pace = (target: TargetName, url: string, durationSec: number, samples?: number[]) =>
      runPaced({
        url,
        headers: headersFor(target),
        connections: CONNECTIONS,
        durationSec,
        warmupSec: 0,
        rate,
        agent: agents[target],
        samples,
      });
    try {
      for (let copy = 0; copy < PROCESSES; copy++) {
        const warmUrls = await freshUrls(copy);
        for (const target of targets) await pace(target, warmUrls[target], 2);
      }
      for (let round = 0; round < ctx.rounds; round++) {
        const urls = await freshUrls(round);
        const roundOrder = shuffled(targets, order);
        const samples = emptyByTarget<number>();
        const slices = emptyByTarget<LoadResult>();
        // The round's processes were last paced a round or more ago: their keep-alive connections
        // have closed, and opening them again is not what is measured.
        for (const target of targets) await pace(target, urls[target], SLICE_SEC);
        for (let slice = 0; slice < ctx.roundSeconds / SLICE_SEC; slice++)
          for (const target of rotate(roundOrder, slice))
            slices[target].push(await pace(target, urls[target], SLICE_SEC, samples[target]));
        for (const target of targets) paced[target].push(pooled(samples[target], slices[target]));
        ctx.log(
          `proxy paced round ${round + 1} (processes #${(round % PROCESSES) + 1}): ` +
            targets.map((t) => `${t} p99 ${fmt(paced[t][round]!.p99, 2)} ms`).join(', '),
        );
      }
    } finally {
      for (const agent of Object.values(agents)) agent.destroy();
    }

    const med = (results: LoadResult[], key: 'rps' | 'p50' | 'p99'): number =>
      median(results.map((r) => r[key]));
    const proxyRps = med(saturated.proxy, 'rps');
    const throughputRows = targets.map((target) => {
      const rps = med(saturated[target], 'rps');
      const ratio = rps / proxyRps;
      const module = isModule(target) ? target : undefined;
      const platform = module && platformOf(module);
      const non2xx = saturated[target].reduce((n, r) => n + r.non2xx + r.errors, 0);
      return [
        LABEL[target],
        fmt(rps),
        fmt(med(saturated[target], 'p50'), 2),
        fmt(med(saturated[target], 'p99'), 2),
        fmt(ratio, 2),
        platform ? fmt(rps / med(saturated[FLOOR_OF[platform]], 'rps'), 2) : '',
        platform ? `≥ ${THROUGHPUT_GOAL[platform]}` : '',
        platform ? ratio >= THROUGHPUT_GOAL[platform] && non2xx === 0 : undefined,
        module ? fmt(median(upstreamPerRequest[module]), 3) : '',
        non2xx,
      ];
    });
    // Added p99: the median over rounds of the difference within each round (the same moments of the machine).
    const addedP99 = (target: TargetName, reference: TargetName): number =>
      median(paced[target].map((result, round) => result.p99 - paced[reference][round]!.p99));
    const latencyRows = targets.map((target) => {
      const module = isModule(target);
      const added = addedP99(target, 'sandbox');
      return [
        LABEL[target],
        fmt(med(paced[target], 'rps')),
        fmt(med(paced[target], 'p50'), 2),
        fmt(med(paced[target], 'p99'), 2),
        target === 'sandbox' ? '' : fmt(added, 2),
        module ? fmt(addedP99(target, 'proxy'), 2) : '',
        module ? fmt(addedP99(target, FLOOR_OF[platformOf(target)]), 2) : '',
        module ? `≤ ${ADDED_P99_GOAL_MS} ms` : '',
        module ? added <= ADDED_P99_GOAL_MS : undefined,
      ];
    });
    return [
      {
        title: `1a. Proxy overhead: throughput at ${CONNECTIONS} connections (medians of ${ctx.rounds} × ${ctx.roundSeconds} s)`,
        columns: [
          'target',
          'req/s',
          'p50 ms',
          'p99 ms',
          'ratio to minimal proxy',
          'ratio to the bare Nest route',
          'goal',
          'result',
          'upstream GETs per request',
          'non-2xx/errors',
        ],
        rows: throughputRows,
        notes: [
          'Status of a pending sms session, `statusCache: { enabled: false }` and `limits: { enabled: false }`: every request is one upstream GET (column "upstream GETs per request", counted by the sandbox).',
          `Sandbox, minimal proxy and each host app run in their own process; autocannon runs in the runner process. All share the machine's cores. Every target but the sandbox runs as ${PROCESSES} processes, round r on the (r mod ${PROCESSES})th, so that one process's lasting luck is not the figure.`,
          'The bare Nest routes (bench/servers/platform-floor.ts) do the same hop in a Nest controller on each platform with no module: what the platform alone costs. "Ratio to the bare Nest route" is the module\'s own share.',
        ],
      },
      {
        title: `1b. Proxy overhead: latency at a fixed ${fmt(rate)} req/s over ${CONNECTIONS} connections (medians of ${ctx.rounds} × ${ctx.roundSeconds} s)`,
        columns: [
          'target',
          'req/s',
          'p50 ms',
          'p99 ms',
          'added p99 vs direct ms',
          'added p99 vs minimal proxy ms',
          'added p99 vs bare Nest route ms',
          'goal (added vs direct)',
          'result',
        ],
        rows: latencyRows,
        notes: [
          `An even pace (request i at start + i / rate, open loop, over a pool of ${CONNECTIONS} keep-alive connections) at 40% of the slowest target's saturated throughput, so that no target queues: the difference in p99 is what the hop costs. Latency runs from issuing a request to the end of its answer.`,
          `Each round runs every target in ${SLICE_SEC} s slices, in an order drawn (seeded) for each round and rotating slice by slice, so that the machine's slow moments and the load each target leaves behind fall on every target alike and every target's keep-alive connections stay open between its turns; a target's p99 is taken over all its slices of the round, and an added p99 is the median over rounds of the difference within each round. A round starts with one unrecorded slice per target on the round's processes, to open their keep-alive connections again.`,
        ],
      },
    ];
  } finally {
    for (const s of servers.reverse()) await s.close();
  }
}

function hostConfig(platform: Platform, sb: SandboxReady) {
  return {
    platform,
    module: {
      api: apiOptions(sb),
      statusCache: { enabled: false },
      limits: { enabled: false },
      expirySeconds: 600,
    },
  };
}

function rotate<T>(items: T[], by: number): T[] {
  const k = by % items.length;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** One target's figures in a round, from the latencies of all its slices. */
function pooled(samples: number[], slices: LoadResult[]): LoadResult {
  const statusCodes: Record<string, number> = {};
  for (const r of slices)
    for (const [code, count] of Object.entries(r.statusCodes))
      statusCodes[code] = (statusCodes[code] ?? 0) + count;
  const ok = slices.reduce((sum, r) => sum + r.responses - r.non2xx, 0);
  const errors = slices.reduce((sum, r) => sum + r.errors, 0);
  return summarise(samples, ok, errors, statusCodes, slices.length * SLICE_SEC);
}
