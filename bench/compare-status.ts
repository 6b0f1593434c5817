/**
 * `node dist-bench/bench/compare-status.js [express|fastify] [rounds] [seconds] [target...]`
 * (`COMPARE_PROCESSES=n`, default 3: processes per target): host CPU per
 * `GET /status/:id` poll (pending session, coalescing and limits off: one upstream GET per poll) of several
 * targets side by side, in short slices whose order rotates every round, so that a busy moment of the machine
 * falls on every target alike. Targets: `undici`, `axios` (the module with that API transport),
 * `floor` (the bare Nest route of bench/servers/platform-floor.ts), `proxy` (the minimal node:http proxy);
 * `undici@/tmp/before` runs the module as compiled into another tree (a copy of dist-bench made before a
 * change: A/B of the change in one run).
 * Prints, per target, the median over rounds of the host's CPU µs per request and of req/s, and the median
 * of the per-round ratio of req/s to the minimal proxy when it is one of the targets. Every target is pinned
 * to CPU 0 and this runner and the sandbox to CPU 1 (`taskset`, when the machine has it): unpinned, the
 * scheduler placed a target beside the load generator in some runs and not in others, and the same tree
 * measured 46 µs in one run and 60 µs in the next. Even pinned, two processes of one and the same build
 * differed by up to 7 µs (52 and 59) for their whole lives, more than most changes being compared: so each
 * target runs as several processes, and its figure is the median over all of their slices. A tool for
 * deciding between variants, not a benchmark of the issue (that is `npm run bench -- proxy`).
 */
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
import { runLoad } from './lib/load.js';
import { median } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';

const platform = (process.argv[2] ?? 'fastify') as Platform;
const rounds = Number(process.argv[3] ?? 7);
const seconds = Number(process.argv[4] ?? 2);
const names = process.argv.length > 5 ? process.argv.slice(5) : ['undici', 'axios', 'floor', 'proxy'];
const processesPerTarget = Math.max(1, Number(process.env.COMPARE_PROCESSES ?? 3));

interface Target {
  name: string;
  server: ChildServer<{ url: string }>;
  url: string;
  cpu: number[];
  rps: number[];
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
      if (name === 'proxy' || name === 'floor') {
        const server = name === 'proxy' ? await forkMinimalProxy(sb) : await forkPlatformFloor(platform, sb);
        if (runnerPinned) pinProcess(server.pid, String(TARGET_CPU));
        targets.push({ name, server, url: `${server.ready.url}/status/${requestId}`, cpu: [], rps: [] });
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
      targets.push({ name, server, url, cpu: [], rps: [] });
    }

  for (const t of targets) await runLoad({ url: t.url, connections: 50, durationSec: 1 });
  for (let round = 0; round < rounds; round++) {
    const order = targets.map((_, i) => targets[(i + round) % targets.length]);
    for (const t of order) {
      const before = processCpuSeconds(t.server.pid);
      const result = await runLoad({ url: t.url, connections: 50, durationSec: seconds });
      t.cpu.push(((processCpuSeconds(t.server.pid) - before) * 1e6) / result.responses);
      t.rps.push(result.rps);
      if (result.non2xx + result.errors > 0)
        console.log(`${t.name}: ${result.non2xx + result.errors} not 2xx`);
    }
  }
} finally {
  if (runnerPinned) pinProcess(process.pid, allCpus());
  for (const t of targets) await t.server.close();
  await sandbox.close();
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
