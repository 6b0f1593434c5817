/**
 * Issue 6's store rows: operations per second of MemoryStore and RedisStore (throwaway local
 * redis-server or REDIS_URL), 64 operations in flight, in a fresh process.
 */
import { randomBytes } from 'node:crypto';
import { MemoryStore } from '../src/store/memory.store.js';
import { RedisStore } from '../src/store/redis.store.js';
import type { VerificationStore } from '../src/store/verification-store.interface.js';
import { runIsolated, type BenchContext } from './lib/context.js';
import { fmt, median, type BenchTable } from './lib/report.js';

const IN_FLIGHT = 64;
const OPERATIONS = ['get', 'set', 'setIfAbsent', 'increment', 'schedule', 'claimDue'] as const;
type Operation = (typeof OPERATIONS)[number];

export interface StoreOpsArgs {
  redisUrl: string;
  opsPerRound: number;
  rounds: number;
}
export type StoreOpsResult = Record<'memory' | 'redis', Record<Operation, number[]>> & {
  /** New keys per second written into a MemoryStore at its bound (each write evicts the oldest). */
  fullMemorySets: number[];
};

/** The bound of the full-store row: large enough that a scan of the map's deleted slots would show. */
const FULL_STORE_ENTRIES = 200_000;

export async function storeBenchmark(ctx: BenchContext): Promise<BenchTable[]> {
  const args: StoreOpsArgs = {
    redisUrl: await ctx.redisUrl(),
    opsPerRound: ctx.quick ? 5_000 : 50_000,
    rounds: ctx.rounds,
  };
  const r = await runIsolated<StoreOpsResult>('./store.bench.js', 'runStoreOps', args);
  return [
    {
      title: `6. Store operations per second, ${IN_FLIGHT} in flight (medians of ${ctx.rounds} rounds × ${fmt(args.opsPerRound)} operations)`,
      columns: ['operation', 'MemoryStore ops/s', 'RedisStore ops/s', 'Redis / Memory'],
      rows: OPERATIONS.map((op) => {
        const memory = median(r.memory[op]);
        const redis = median(r.redis[op]);
        return [op, fmt(memory), fmt(redis), fmt(redis / memory, 3)];
      }),
      notes: [
        'No goal of its own: Redis is a network round trip per operation (Lua where atomic), MemoryStore a Map lookup. What matters to users is the route throughput ratio in table 3.',
        '`claimDue` claims up to 10 members of a queue of 10,000 due members per call; `schedule` moves members of that queue.',
        `A full MemoryStore (bound ${fmt(FULL_STORE_ENTRIES)}, every write a new key that evicts the oldest, as under a stream of new client addresses): ${fmt(median(r.fullMemorySets))} sets/s.`,
      ],
    },
  ];
}

export async function runStoreOps(args: StoreOpsArgs): Promise<StoreOpsResult> {
  const stores = {
    memory: new MemoryStore(),
    redis: new RedisStore({ url: args.redisUrl, keyPrefix: `bench:${randomBytes(4).toString('hex')}:` }),
  };
  const result = { memory: {}, redis: {}, fullMemorySets: [] } as unknown as StoreOpsResult;
  try {
    for (const [name, store] of Object.entries(stores) as ['memory' | 'redis', VerificationStore][]) {
      for (let i = 0; i < 10_000; i++) await store.set(`k:${i}`, `value-${i}`, 600_000);
      for (let i = 0; i < 10_000; i++) await store.schedule('q', `m${i}`, store.now() - 1);
      for (const op of OPERATIONS) {
        result[name][op] = [];
        for (let round = 0; round < args.rounds; round++)
          result[name][op].push(await opsPerSecond(store, op, args.opsPerRound, round));
      }
    }
    result.fullMemorySets = await fullStoreSetsPerSecond(args);
    return result;
  } finally {
    await stores.memory.close();
    await stores.redis.close();
  }
}

async function opsPerSecond(
  store: VerificationStore,
  op: Operation,
  total: number,
  round: number,
): Promise<number> {
  let issued = 0;
  const one = (i: number): Promise<unknown> => {
    const key = `k:${i % 10_000}`;
    switch (op) {
      case 'get':
        return store.get(key);
      case 'set':
        return store.set(key, `value-${i}`, 600_000);
      case 'setIfAbsent':
        return store.setIfAbsent(`claim:${round}:${i}`, '1', 60_000);
      case 'increment':
        return store.increment(`counter:${i % 1000}`, 1, 600_000);
      case 'schedule':
        return store.schedule('q', `m${i % 10_000}`, store.now() - 1);
      case 'claimDue':
        return store.claimDue('q', 10, 1);
    }
  };
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (issued < total) await one(issued++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return total / seconds;
}

/** New keys per second into a MemoryStore that is full: each write evicts the least recently written entry. */
async function fullStoreSetsPerSecond(args: StoreOpsArgs): Promise<number[]> {
  const store = new MemoryStore({ maxEntries: FULL_STORE_ENTRIES });
  try {
    let next = 0;
    // Filled past its bound twice, so that its map has been through evictions before it is measured.
    while (next < 2 * FULL_STORE_ENTRIES) await store.set(`new:${next++}`, '1', 600_000);
    const rates: number[] = [];
    for (let round = 0; round < args.rounds; round++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < args.opsPerRound; i++) await store.set(`new:${next++}`, '1', 600_000);
      rates.push(args.opsPerRound / (Number(process.hrtime.bigint() - started) / 1e9));
    }
    return rates;
  } finally {
    await store.close();
  }
}
