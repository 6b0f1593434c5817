/**
 * `node dist-bench/bench/compare-start.js [rounds] [starts] [name=<dist-bench>...]`: host CPU µs per
 * `POST /start` (SMS, a new number each, protection on as in the routes benchmark: startsHostConfig) of
 * several trees side by side, on MemoryStore and on RedisStore (`REDIS_URL`, default the local
 * server; each host its own key prefix). Each round runs `starts` starts (4 at a time) on every host
 * in a drawn (seeded) order, so a busy moment of the machine falls on every tree alike; prints the
 * median over rounds, and the median over rounds of each host's ratio to the first tree's on its store. Start throughput moved by up to 40 % between rounds of one build (the
 * sandbox's answers and the connection pool set its pace), its host CPU by far less: this decides
 * between variants of the start path. With no tree named, this tree alone.
 */
import { forkHost, forkSandbox, PhoneNumbers, startsHostConfig } from './lib/context.js';
import type { ChildServer } from './lib/child-process.js';
import { processCpuSeconds } from './lib/child-process.js';
import { mulberry32, shuffled } from './lib/random.js';
import { median } from './lib/report.js';
import type { HostReady } from './servers/host-process.js';

const rounds = Number(process.argv[2] ?? 9);
const perRound = Number(process.argv[3] ?? 300);
const trees = process.argv.length > 4 ? process.argv.slice(4) : ['this='];
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const drawOrder = mulberry32(29);

interface Host {
  name: string;
  server: ChildServer<HostReady>;
  cpu: number[];
}

const sandbox = await forkSandbox({ demoAccount: { balance: 1_000_000_000 } });
const hosts: Host[] = [];
const phones = new PhoneNumbers();
let client = 0;

/** `count` starts, 4 at a time; how many the host answered 201. */
async function starts(url: string, count: number): Promise<number> {
  let sent = 0;
  let created = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (sent++ < count) {
        const res = await fetch(`${url}/verification/start`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-bench-client': `c${client++}` },
          body: JSON.stringify({ phone_number: phones.take(), method: 'sms' }),
        });
        await res.text();
        if (res.status === 201) created++;
      }
    }),
  );
  return created;
}

try {
  for (const tree of trees) {
    const [name, path] = tree.split('=') as [string, string];
    for (const store of ['memory', 'redis'] as const) {
      const server = await forkHost(
        startsHostConfig(sandbox.ready, store === 'redis' ? redisUrl : undefined),
        undefined,
        path || undefined,
      );
      hosts.push({ name: `${name}/${store}`, server, cpu: [] });
    }
  }
  // Warm-up: the first starts of a process compile its code.
  for (const host of hosts) await starts(host.server.ready.url, perRound);
  for (let round = 0; round < rounds; round++) {
    for (const host of shuffled(hosts, drawOrder)) {
      const before = processCpuSeconds(host.server.pid);
      const created = await starts(host.server.ready.url, perRound);
      if (created === 0) throw new Error(`${host.name}: no start succeeded`);
      host.cpu.push(((processCpuSeconds(host.server.pid) - before) * 1e6) / created);
    }
  }
  console.log(`host CPU µs per POST /start, median of ${rounds} rounds × ${perRound} starts:`);
  for (const host of hosts) {
    // Against the first tree on the same store, round by round: the machine's drift cancels out.
    const first = hosts.find((other) => other.name.endsWith(host.name.slice(host.name.indexOf('/'))))!;
    const ratio = median(host.cpu.map((cpu, round) => cpu / first.cpu[round]!));
    console.log(
      `${host.name.padEnd(20)} ${median(host.cpu).toFixed(0).padStart(6)}  ÷ ${first.name}: ${ratio.toFixed(2)}` +
        `   (${host.cpu.map((v) => v.toFixed(0)).join(' ')})`,
    );
  }
} finally {
  for (const host of hosts) await host.server.close();
  await sandbox.close();
}
