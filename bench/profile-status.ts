/**
 * `node dist-bench/bench/profile-status.js [express|fastify] [seconds] [undici|node|axios]`: a CPU profile of a
 * host app answering `GET /verification/status/:id` (coalescing off) under 50 connections, summarised by
 * self time per function and per package, with the API client's transport given (default: the module's
 * default). A tool for finding costs, not a benchmark.
 */
import { readFileSync } from 'node:fs';
import type { ApiTransport } from '../src/index.js';
import { processCpuSeconds } from './lib/child-process.js';
import { apiOptions, forkHost, forkSandbox, PhoneNumbers, postJson } from './lib/context.js';
import type { Platform } from './lib/host-app.js';
import { runLoad } from './lib/load.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
}

const platform = (process.argv[2] ?? 'fastify') as Platform;
const seconds = Number(process.argv[3] ?? 5);
const transport = process.argv[4] as ApiTransport | undefined;
const out = `/tmp/status-${platform}.cpuprofile`;
const sandbox = await forkSandbox();
const host = await forkHost({
  platform,
  module: {
    api: { ...apiOptions(sandbox.ready), ...(transport ? { transport } : {}) },
    statusCache: { enabled: false },
    limits: { enabled: false },
    expirySeconds: 600,
  },
});
try {
  const phones = new PhoneNumbers();
  const start = await postJson(`${host.ready.url}/verification/start`, {
    phone_number: phones.take(),
    method: 'sms',
  });
  const url = `${host.ready.url}/verification/status/${start.body.verification_id as string}`;
  await runLoad({ url, connections: 50, durationSec: 2 });
  const hostBefore = processCpuSeconds(host.pid);
  const sandboxBefore = processCpuSeconds(sandbox.pid);
  const runnerBefore = process.cpuUsage();
  const plain = await runLoad({ url, connections: 50, durationSec: seconds });
  const runner = process.cpuUsage(runnerBefore);
  const perRequest = (cpuSeconds: number): string => ((cpuSeconds * 1e6) / plain.responses).toFixed(0);
  console.log(
    `${platform}${transport ? ` (${transport})` : ''}: ${Math.round(plain.rps)} req/s, p99 ${plain.p99} ms; CPU µs per request: ` +
      `host ${perRequest(processCpuSeconds(host.pid) - hostBefore)}, ` +
      `sandbox ${perRequest(processCpuSeconds(sandbox.pid) - sandboxBefore)}, ` +
      `runner ${perRequest((runner.user + runner.system) / 1e6)}`,
  );
  await host.call('profileStart');
  const result = await runLoad({ url, connections: 50, durationSec: seconds });
  await host.call('profileStop', out);
  console.log(`${platform} (profiled): ${Math.round(result.rps)} req/s, p99 ${result.p99} ms`);
} finally {
  await host.close();
  await sandbox.close();
}

const profile = JSON.parse(readFileSync(out, 'utf8')) as CpuProfile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map<number, number>();
for (const id of profile.samples) self.set(id, (self.get(id) ?? 0) + 1);
const total = profile.samples.length;
const fnSelf = new Map<string, number>();
const pkgSelf = new Map<string, number>();
for (const [id, count] of self) {
  const frame = byId.get(id)!.callFrame;
  const where = frame.url.replace(/^file:\/\/.*?node_modules\//, '').replace(/^file:\/\/\/work\/main\//, '');
  const key = `${frame.functionName || '(anon)'} ${where}:${frame.lineNumber}`;
  fnSelf.set(key, (fnSelf.get(key) ?? 0) + count);
  const pkg = frame.url.includes('node_modules/')
    ? frame.url
        .split('node_modules/')[1]
        .split('/')
        .slice(0, frame.url.split('node_modules/')[1].startsWith('@') ? 2 : 1)
        .join('/')
    : frame.url.startsWith('node:')
      ? 'node:' + frame.url.slice(5).split('/')[0]
      : frame.url
        ? where.split('/').slice(0, 2).join('/')
        : frame.functionName;
  pkgSelf.set(pkg, (pkgSelf.get(pkg) ?? 0) + count);
}
const top = (m: Map<string, number>, n: number): void => {
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, n))
    console.log(`${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`);
};
console.log('--- by package');
top(pkgSelf, 25);
console.log('--- by function');
top(fnSelf, 40);
