/**
 * `node dist-bench/bench/compare-status.js [express|fastify] [rounds] [seconds] [target...]`: host CPU per
 * `GET /status/:id` poll (pending session, coalescing and limits off: one upstream GET per poll) of several
 * targets side by side, in short slices whose order rotates every round, so that a busy moment of the machine
 * falls on every target alike. Targets: `undici`, `axios` (the module with that API transport),
 * `floor` (the bare Nest route of bench/servers/platform-floor.ts), `proxy` (the minimal node:http proxy);
 * `undici@/tmp/before` runs the module as compiled into another tree (a copy of dist-bench made before a
 * change: A/B of the change in one run).
 * Prints, per target, the median over rounds of the host's CPU µs per request and of req/s, and the median
 * of the per-round ratio of req/s to the minimal proxy when it is one of the targets. A tool for deciding
 * between variants, not a benchmark of the issue (that is `npm run bench -- proxy`).
 */
import type { ApiTransport } from '../src/index.js';
import { pathToFileURL } from 'node:url';
import { ChildServer, processCpuSeconds } from './lib/child-process.js';
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

interface Target {
  name: string;
  server: ChildServer<{ url: string }>;
  url: string;
  cpu: number[];
  rps: number[];
}

const sandbox = await forkSandbox();
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
  for (const name of names) {
    if (name === 'proxy' || name === 'floor') {
      const server = name === 'proxy' ? await forkMinimalProxy(sb) : await forkPlatformFloor(platform, sb);
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
  for (const t of targets) await t.server.close();
  await sandbox.close();
}

const proxy = targets.find((t) => t.name === 'proxy');
console.log(`${platform}, ${rounds} rounds × ${seconds} s, medians:`);
for (const t of targets) {
  const ratio = proxy ? median(t.rps.map((r, i) => r / proxy.rps[i])).toFixed(2) : '';
  console.log(
    `${t.name.padEnd(12)} host CPU µs/request ${median(t.cpu).toFixed(0).padStart(4)}  ` +
      `req/s ${Math.round(median(t.rps)).toString().padStart(6)}` +
      (proxy ? `  ratio to proxy ${ratio}` : '') +
      `  (CPU per round: ${t.cpu.map((c) => c.toFixed(0)).join(' ')})`,
  );
}
