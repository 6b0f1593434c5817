/**
 * `npm run bench [-- <names...>] [--quick] [--rounds N] [--seconds N] [--soak-minutes N]`
 *
 * Runs the benchmarks of bench/README.md (which records their latest results) and prints one Markdown
 * table per benchmark: medians of several rounds, the ratio, the goal beside it and PASS/MISS. Each server
 * (sandbox, host apps, minimal proxy) runs in its own process; heap figures come from fresh
 * processes. Without names every benchmark runs.
 */
import { cpus, totalmem } from 'node:os';
import { parseArgs } from 'node:util';
import { ThrowawayRedisServer } from '../test/global-setup.js';
import { runIsolated, type BenchContext } from './lib/context.js';
import { formatTable, tableFromObjects, type BenchTable } from './lib/report.js';
import { coalescingBenchmark } from './coalescing.bench.js';
import { proxyBenchmark } from './proxy.bench.js';
import { pushBenchmark } from './push.bench.js';
import { memoryBenchmark } from './memory.bench.js';
import { orchestrationBenchmark } from './orchestration.bench.js';
import { routesBenchmark } from './routes.bench.js';
import { soakBenchmark } from './soak.bench.js';
import { storeBenchmark } from './store.bench.js';
import { storeLatencyBenchmark } from './store-latency.bench.js';
import { startTraceBenchmark } from './start-trace.bench.js';
import { webhooksBenchmark } from './webhooks.bench.js';

type Benchmark = (ctx: BenchContext) => Promise<BenchTable[]>;

/** Issue 5's benchmark (bench/protection.bench.ts), run in a fresh process; it returns rows (plain objects). */
const protectionBenchmark: Benchmark = async (ctx) => {
  const result = await runIsolated<Record<string, unknown>[]>('./protection.bench.js', 'runProtectionBench', {
    quick: ctx.quick,
  });
  return [tableFromObjects('5 (issue 5). Protection: simulated SMS-pumping attack', result)];
};

const BENCHMARKS: Record<string, Benchmark> = {
  proxy: proxyBenchmark,
  coalescing: coalescingBenchmark,
  routes: routesBenchmark,
  store: storeBenchmark,
  'store-latency': storeLatencyBenchmark,
  'start-trace': startTraceBenchmark,
  webhooks: webhooksBenchmark,
  memory: memoryBenchmark,
  soak: soakBenchmark,
  protection: protectionBenchmark,
  push: pushBenchmark,
  orchestration: orchestrationBenchmark,
};

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      'soak-minutes': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(
      `npm run bench -- [${Object.keys(BENCHMARKS).join('|')} ...] [--quick] [--rounds N] [--seconds N] [--soak-minutes N]`,
    );
    return;
  }
  const unknown = positionals.filter((name) => !(name in BENCHMARKS));
  if (unknown.length)
    throw new Error(
      `unknown benchmark(s) ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}`,
    );
  const selected = positionals.length ? positionals : Object.keys(BENCHMARKS);
  const quick = values.quick ?? false;

  let redis: ThrowawayRedisServer | undefined;
  const ctx: BenchContext = {
    quick,
    rounds: Number(values.rounds ?? (quick ? 2 : 5)),
    roundSeconds: Number(values.seconds ?? (quick ? 2 : 5)),
    soakMinutes: Number(values['soak-minutes'] ?? (quick ? 1 : 10)),
    redisUrl: async () => {
      if (process.env.REDIS_URL) return process.env.REDIS_URL;
      redis ??= await ThrowawayRedisServer.start();
      return redis.url;
    },
    log: (line) => process.stderr.write(`  … ${line}\n`),
  };

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`# npm run bench ${process.argv.slice(2).join(' ')}`.trimEnd());
  console.log('');
  console.log(
    `Node ${process.version}, ${cpus().length} cores (${cpu}), ${Math.round(totalmem() / 2 ** 30)} GB RAM, ${new Date().toISOString()}; ` +
      `${ctx.rounds} rounds × ${ctx.roundSeconds} s per measurement${quick ? ' (--quick)' : ''}.`,
  );
  let failed = false;
  try {
    for (const name of selected) {
      const started = Date.now();
      process.stderr.write(`running ${name}…\n`);
      try {
        for (const table of await BENCHMARKS[name]!(ctx)) console.log(`\n${formatTable(table)}`);
      } catch (error) {
        failed = true;
        console.log(`\n### ${name}\n\nfailed: ${(error as Error).stack ?? String(error)}`);
      }
      process.stderr.write(`${name} took ${Math.round((Date.now() - started) / 1000)} s\n`);
    }
  } finally {
    await redis?.stop();
  }
  if (failed) process.exitCode = 1;
}

await main();
