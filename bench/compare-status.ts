/**
 * `node dist-bench/bench/compare-status.js [express|fastify] [rounds] [seconds] [target...]`
 * (`COMPARE_PROCESSES=n`, default 3: processes per target; `COMPARE_PACED_RATE=n`: also latency at an even
 * n req/s): host CPU per
 * `GET /status/:id` poll (pending session, coalescing and limits off: one upstream GET per poll) of several
 * targets side by side, in short slices in an order drawn (seeded) for every round, so that a busy moment
 * of the machine, or a neighbour's leftover load, falls on every target alike. Targets: `undici`,
 * `axios` (the module with that API transport), `floor` (the bare Nest route of
 * bench/servers/platform-floor.ts), `proxy` (the minimal node:http proxy);
 * `undici@/tmp/before` runs the module as compiled into another tree (a copy of dist-bench made before a
 * change: A/B of the change in one run), `sandbox` the sandbox's own `GET /v1/verify/{id}` (the direct hop).
 * Prints, per target, the median over rounds of the host's CPU µs per request and of req/s, and the median
 * of the per-round ratio of req/s to the minimal proxy when it is one of the targets. Every target is pinned
 * to CPU 0 and this runner and the sandbox to CPU 1 (`taskset`, when the machine has it): unpinned, the
 * scheduler placed a target beside the load generator in some runs and not in others, and the same tree
 * measured 46 µs in one run and 60 µs in the next. Even pinned, two processes of one and the same build
 * differed by up to 7 µs (52 and 59) for their whole lives, more than most changes being compared: so each
 * target runs as several processes, and its figure is the median over all of their slices. A tool for
 * deciding between variants, not a benchmark of the issue (that is `npm run bench -- proxy`).
 * With `COMPARE_PACED_RATE`, rounds at that even rate follow (the same slices, each round's order drawn,
 * `runPaced`). Per target it prints the p50 and p99 over every latency of all its processes pooled, each
 * process's own p99, and their median, the typical process; with `sandbox` among the targets, the p99 each
 * adds to the direct hop, typical and pooled. One process's p99 at an even rate moved from 1.6 to 35 ms
 * between processes of one build, in both trees alike, so a pooled p99 is decided by its worst process and
 * one process's by chance: the typical process's is the figure to compare.
 */
import http from 'node:http';
import type { ApiTransport } from '../src/index.js';
import { pathToFileURL } from 'node:url';
import { allCpus, ChildServer, pinProcess, processCpuSeconds } from './lib/child-process.js';
import {
  apiOptions,
  basicAuth,
  forkHost,
  forkMinimalProxy,
  forkPlatformFloor,
  forkSandbox,
  PhoneNumbers,
  postJson,
} from './lib/context.js';
import type { HostConfig, Platform } from './lib/host-app.js';
import { runLoad, runPaced } from './lib/load.js';
import { mulberry32, shuffled } from './lib/random.js';
import { median, percentile } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';

const platform = (process.argv[2] ?? 'fastify') as Platform;
const rounds = Number(process.argv[3] ?? 7);
const seconds = Number(process.argv[4] ?? 2);
const names = process.argv.length > 5 ? process.argv.slice(5) : ['undici', 'axios', 'floor', 'proxy'];
const processesPerTarget = Math.max(1, Number(process.env.COMPARE_PROCESSES ?? 3));
/** The order of each round's turns (seeded, so that a run can be repeated). */
const drawOrder = mulberry32(17);
const pacedRate = Number(process.env.COMPARE_PACED_RATE ?? 0);

interface Target {
  name: string;
  server: ChildServer<{ url: string }>;
  url: string;
  headers?: Record<string, string>;
  cpu: number[];
  rps: number[];
  /** Every latency (ms) of the paced rounds. */
  paced: number[];
}

const TARGET_CPU = 0;
const runnerPinned = pinProcess(process.pid, '1');
const sandbox = await forkSandbox();
if (runnerPinned) pinProcess(sandbox.pid, '1');
const sb = sandbox.ready;
const phones = new PhoneNumbers();
const targets: Target[] = [];
try {
  // The bare routes poll a pending session started on the sandbox directly.
  const direct = await postJson(
    `${sb.url}/v1/verify`,
    { phone_number: phones.take(), method: 'sms', expiry_seconds: 600 },
    { authorization: basicAuth(sb.apiKey, sb.apiSecret) },
  );
  const requestId = direct.body.request_id as string;
  for (let copy = 0; copy < processesPerTarget; copy++)
    for (const name of names) {
      if (name === 'sandbox') {
        // The direct hop: the sandbox itself (on the runner's CPU), one "process" per copy for the rotation.
        const url = `${sb.url}/v1/verify/${requestId}`;
        const headers = { authorization: basicAuth(sb.apiKey, sb.apiSecret) };
        targets.push({ name, server: sandbox, url, headers, cpu: [], rps: [], paced: [] });
        continue;
      }
      if (name === 'proxy' || name === 'floor') {
        const server = name === 'proxy' ? await forkMinimalProxy(sb) : await forkPlatformFloor(platform, sb);
        if (runnerPinned) pinProcess(server.pid, String(TARGET_CPU));
        const url = `${server.ready.url}/status/${requestId}`;
        targets.push({ name, server, url, cpu: [], rps: [], paced: [] });
        continue;
      }
      const [transport, tree] = name.split('@') as [ApiTransport, string | undefined];
      const config: HostConfig = {
        platform,
        module: {
          api: { ...apiOptions(sb), transport },
          statusCache: { enabled: false },
          limits: { enabled: false },
          expirySeconds: 600,
        },
      };
      const server = tree
        ? await ChildServer.fork<HostReady>(pathToFileURL(`${tree}/bench/servers/host-process.js`), config)
        : await forkHost(config);
      if (runnerPinned) pinProcess(server.pid, String(TARGET_CPU));
      const start = await postJson(`${server.ready.url}/verification/start`, {
        phone_number: phones.take(),
        method: 'sms',
      });
      if (start.status !== 201) throw new Error(`start on ${name} answered ${start.status}`);
      const url = `${server.ready.url}/verification/status/${start.body.verification_id as string}`;
      targets.push({ name, server, url, cpu: [], rps: [], paced: [] });
    }

  for (const t of targets) await runLoad({ url: t.url, headers: t.headers, connections: 50, durationSec: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const t of shuffled(targets, drawOrder)) {
      const before = processCpuSeconds(t.server.pid);
      const result = await runLoad({ url: t.url, headers: t.headers, connections: 50, durationSec: seconds });
      t.cpu.push(((processCpuSeconds(t.server.pid) - before) * 1e6) / result.responses);
      t.rps.push(result.rps);
      if (result.non2xx + result.errors > 0)
        console.log(`${t.name}: ${result.non2xx + result.errors} not 2xx`);
    }
  }
  if (pacedRate > 0) await pacedRounds();
} finally {
  if (runnerPinned) pinProcess(process.pid, allCpus());
  for (const t of targets) if (t.server !== sandbox) await t.server.close();
  await sandbox.close();
}

/** The paced rounds: every target at `pacedRate` for `seconds` per round, each on its own warm keep-alive pool. */
async function pacedRounds(): Promise<void> {
  const agents = targets.map(() => new http.Agent({ keepAlive: true, maxSockets: 50 }));
  const paced = (t: Target, i: number, durationSec: number, samples?: number[]) =>
    runPaced({
      url: t.url,
      headers: t.headers,
      connections: 50,
      durationSec,
      warmupSec: 0,
      rate: pacedRate,
      agent: agents[i],
      samples,
    });
  try {
    for (const [i, t] of targets.entries()) await paced(t, i, 1);
    for (let round = 0; round < rounds; round++)
      for (const i of shuffled([...targets.keys()], drawOrder)) {
        const t = targets[i]!;
        const result = await paced(t, i, seconds, t.paced);
        if (result.non2xx + result.errors > 0)
          console.log(`${t.name} paced: ${result.non2xx + result.errors} not 2xx`);
      }
  } finally {
    for (const agent of agents) agent.destroy();
  }
}

/** A target's slices, every process of it together. */
function slicesOf(name: string): { cpu: number[]; rps: number[]; perProcess: number[] } {
  const mine = targets.filter((t) => t.name === name);
  return {
    cpu: mine.flatMap((t) => t.cpu),
    rps: mine.flatMap((t) => t.rps),
    perProcess: mine.map((t) => median(t.cpu)),
  };
}
/** A target's mean req/s over its processes in each round. */
function roundRps(name: string): number[] {
  const mine = targets.filter((t) => t.name === name);
  return Array.from(
    { length: rounds },
    (_, round) => mine.reduce((sum, t) => sum + t.rps[round]!, 0) / mine.length,
  );
}

/** A target's paced latencies, every process of it pooled, and each process's p99. */
function pacedOf(name: string): { pooled: number[]; perProcess: number[] } {
  const mine = targets.filter((t) => t.name === name);
  return { pooled: mine.flatMap((t) => t.paced), perProcess: mine.map((t) => percentile(t.paced, 99)) };
}

const hasProxy = names.includes('proxy');
console.log(
  `${platform}, ${rounds} rounds × ${seconds} s × ${processesPerTarget} processes per target, medians` +
    (runnerPinned ? ` (targets on CPU ${TARGET_CPU}, sandbox and load on CPU 1):` : ' (not pinned):'),
);
for (const name of names) {
  const { cpu, rps, perProcess } = slicesOf(name);
  const proxyRps = hasProxy ? roundRps('proxy') : [];
  const ratio = hasProxy ? median(roundRps(name).map((r, i) => r / proxyRps[i]!)).toFixed(2) : '';
  console.log(
    `${name.padEnd(12)} host CPU µs/request ${median(cpu).toFixed(0).padStart(4)}  ` +
      `req/s ${Math.round(median(rps)).toString().padStart(6)}` +
      (hasProxy ? `  ratio to proxy ${ratio}` : '') +
      `  (per process: ${perProcess.map((c) => c.toFixed(0)).join(' ')})`,
  );
}

if (pacedRate > 0) {
  console.log(`at an even ${pacedRate} req/s (ms):`);
  const direct = names.includes('sandbox') ? pacedOf('sandbox') : undefined;
  for (const name of names) {
    const { pooled, perProcess } = pacedOf(name);
    const p99 = percentile(pooled, 99);
    const typical = median(perProcess);
    const added =
      direct === undefined || name === 'sandbox'
        ? ''
        : `  added p99 vs direct: typical ${(typical - median(direct.perProcess)).toFixed(2)}, ` +
          `pooled ${(p99 - percentile(direct.pooled, 99)).toFixed(2)}`;
    console.log(
      `${name.padEnd(12)} p50 ${percentile(pooled, 50).toFixed(2)}  p99 typical ${typical.toFixed(2)}, ` +
        `pooled ${p99.toFixed(2)}${added}  (p99 per process: ${perProcess.map((p) => p.toFixed(2)).join(' ')})`,
    );
  }
}
