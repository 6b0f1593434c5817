import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { KEYS_PER_CALL, RedisStore } from '../../src/store/redis.store.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOperation } from '../../src/store/store-batch.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { sharedRedisUrl, ThrowawayRedisServer } from '../support/redis-server.js';
import { TestClock } from './store-contract.js';

describe('store: redis-key-groups.attack', () => {
  /**
   * Attacks on RedisStore's grouped key operations (issue 45): the key operations issued in one tick
   * go to Redis as one KEY_OPERATIONS call. Each test states what a host sees on MemoryStore (or on
   * RedisStore before the groups, commit 97062bbd) and expects the same of RedisStore now.
   */
  const RUN_PREFIX = `pv-attack-t:${randomUUID()}:`;

  let host: Redis;
  let cluster: ThrowawayRedisCluster;
  let hostCluster: Cluster;
  beforeAll(async () => {
    host = new Redis(sharedRedisUrl());
    cluster = await ThrowawayRedisCluster.start();
    hostCluster = new Cluster(cluster.seeds);
  }, 60_000);
  afterAll(async () => {
    await host.quit();
    await hostCluster?.quit();
    await cluster?.stop();
  });

  /**
   * These tests are about answers, not deadlines: a 4 MB value written on a loaded machine (two Node lines of
   * CI side by side) took longer than the default 1 s command time-out. The time-out's own tests set theirs.
   */
  const ANSWER_TIMEOUT_MS = 10_000;
  const stores: Record<string, (clock: () => number) => VerificationStore> = {
    MemoryStore: (clock) => new MemoryStore({ clock }),
    RedisStore: (clock) =>
      new RedisStore({
        client: host,
        clock,
        keyPrefix: `${RUN_PREFIX}${randomUUID()}:`,
        commandTimeoutMs: ANSWER_TIMEOUT_MS,
      }),
    'RedisStore on a Cluster': (clock) =>
      new RedisStore({
        client: hostCluster,
        clock,
        keyPrefix: `${RUN_PREFIX}${randomUUID()}:`,
        commandTimeoutMs: ANSWER_TIMEOUT_MS,
      }),
  };

  for (const [name, create] of Object.entries(stores)) {
    describe(`grouped key operations answer each caller alone (${name})`, () => {
      let clock: TestClock;
      let store: VerificationStore;
      beforeEach(() => {
        clock = new TestClock();
        store = create(clock.now);
      });
      afterEach(async () => {
        await store.close();
      });

      it("one caller's write with a TTL of 'forever' does not fail the counters of others issued with it", async () => {
        const at = clock.now();
        const [first, , last] = await Promise.allSettled([
          store.increment('first', 1, 60_000),
          store.set('forever', 'v', Number.MAX_VALUE),
          store.increment('last', 1, 60_000),
        ]);
        expect(first).toEqual({ status: 'fulfilled', value: { value: 1, expiresAt: at + 60_000 } });
        expect(last).toEqual({ status: 'fulfilled', value: { value: 1, expiresAt: at + 60_000 } });
      });

      it('an increment whose caller is told it failed was not counted (a retry would count it twice)', async () => {
        const [first] = await Promise.allSettled([
          store.increment('first', 1, 60_000),
          store.set('forever', 'v', Number.MAX_VALUE),
        ]);
        const stored = await store.get('first');
        expect({ answered: first.status, stored }).toEqual(
          first.status === 'rejected'
            ? { answered: 'rejected', stored: null }
            : { answered: 'fulfilled', stored: '1' },
        );
      });

      it('keeps values that look like markers, separators or arguments apart in one group (held)', async () => {
        const values: Record<string, string> = {
          empty: '',
          marker: 'NOT_A_COUNTER',
          colons: '1:2:3',
          set: 'get',
          number: '-12',
          unicode: 'é\u0000☃',
          big: 'x'.repeat(4 * 1024 * 1024),
        };
        const writes = Object.entries(values).map(([key, value]) => store.set(key, value, 60_000));
        const reads = Object.keys(values).map((key) => store.get(key));
        const counters = [store.increment('number', 2, 60_000), store.increment('marker', 1, 60_000)];
        const [, read, counted] = await Promise.all([
          Promise.all(writes),
          Promise.all(reads),
          Promise.allSettled(counters),
        ]);
        expect(read).toEqual(Object.values(values));
        expect(counted[0]).toEqual({
          status: 'fulfilled',
          value: { value: -10, expiresAt: clock.now() + 60_000 },
        });
        expect(counted[1]!.status).toBe('rejected');
        await expect(store.get('marker')).resolves.toBe('NOT_A_COUNTER');
      });

      it('expires a counter and a value at their bound inside one group (held)', async () => {
        const at = clock.now();
        await Promise.all([store.increment('window', 1, 1000), store.set('value', 'v', 1000)]);
        clock.advance(999);
        const [live, liveValue] = await Promise.all([store.increment('window', 1, 1000), store.get('value')]);
        expect([live, liveValue]).toEqual([{ value: 2, expiresAt: at + 1000 }, 'v']);
        clock.advance(1);
        const [restarted, gone, claimed] = await Promise.all([
          store.increment('window', 1, 1000),
          store.get('value'),
          store.setIfAbsent('value', 'w', 1000),
        ]);
        expect([restarted, gone, claimed]).toEqual([{ value: 1, expiresAt: at + 2000 }, null, true]);
      });

      it("an operation the store does not know (a host's plain-JS batch) never writes another caller's value", async () => {
        // With a ttlMs, as a write of its own would have: only the operation's name tells it apart.
        const unknown = [
          { op: 'getdel', key: 'attacker', ttlMs: 60_000 },
        ] as unknown as readonly StoreOperation[];
        await Promise.allSettled([
          store.batch!(unknown),
          store.set('victim', 'secret-of-another-caller', 60_000),
        ]);
        await expect(store.get('attacker')).resolves.toBeNull();
      });

      it("a caller reading a name that holds a due-queue does not fail the others' counters issued with it", async () => {
        await store.schedule('shared-name', 'member', clock.now());
        try {
          const at = clock.now();
          const [counted, read] = await Promise.allSettled([
            store.increment('counter', 1, 60_000),
            store.get('shared-name'),
          ]);
          expect(counted).toEqual({ status: 'fulfilled', value: { value: 1, expiresAt: at + 60_000 } });
          // The read answers for itself (null on MemoryStore, its own error on Redis), never for the counter.
          expect(read.status === 'fulfilled' ? read.value : null).toBeNull();
        } finally {
          await store.unschedule('shared-name', 'member'); // an empty sorted set is removed
        }
      });
    });
  }

  describe('RedisStore on a Cluster with one master not answering (a failover, a long command)', () => {
    it('answers the operations on the other masters issued in the same tick', async () => {
      const prefix = `${RUN_PREFIX}${randomUUID()}:`;
      const store = new RedisStore({ client: hostCluster, keyPrefix: prefix, commandTimeoutMs: 300 });
      const nodeOf = async (key: string): Promise<number> => {
        const slot = Number(await hostCluster.call('CLUSTER', 'KEYSLOT', prefix + key));
        const ranges = (await hostCluster.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
        return ranges.find(([from, to]) => slot >= from && slot <= to)![2][1];
      };
      const keys = Array.from({ length: 30 }, (_, i) => `req-${i}`);
      const ports = await Promise.all(keys.map(nodeOf));
      const paused = ports[0]!;
      const healthy = keys.find((_, i) => ports[i] !== paused)!;
      const slow = new Redis(paused, '127.0.0.1');
      try {
        await store.set(healthy, 'v', 60_000);
        await slow.call('CLIENT', 'PAUSE', '1500', 'ALL');
        const [fast] = await Promise.allSettled([store.get(healthy), store.get(keys[0]!)]);
        expect(fast).toEqual({ status: 'fulfilled', value: 'v' });
      } finally {
        await slow.call('CLIENT', 'UNPAUSE').catch(() => undefined);
        slow.disconnect();
        await store.close();
      }
    });
  });

  describe('RedisStore: a flood in one tick after SCRIPT FLUSH (held)', () => {
    it('answers every operation of several calls in the order issued', async () => {
      const server = await ThrowawayRedisServer.start();
      const admin = new Redis(server.url);
      const client = new Redis(server.url);
      const clock = new TestClock();
      const store = new RedisStore({ client, clock: clock.now });
      try {
        await store.set('seen', 'v', 60_000);
        await admin.script('FLUSH');
        const n = 2 * KEYS_PER_CALL + 44;
        const answers = await Promise.all(
          Array.from({ length: n }, (_, i) =>
            i % 3 === 0 ? store.get(i % 2 ? 'seen' : 'missing') : store.increment(`c${i % 7}`, 1, 60_000),
          ),
        );
        const counts = new Map<string, number>();
        const expected = Array.from({ length: n }, (_, i) => {
          if (i % 3 === 0) return i % 2 ? 'v' : null;
          const key = `c${i % 7}`;
          counts.set(key, (counts.get(key) ?? 0) + 1);
          return { value: counts.get(key), expiresAt: clock.now() + 60_000 };
        });
        expect(answers).toEqual(expected);
      } finally {
        await store.close();
        client.disconnect();
        await admin.quit();
        await server.stop();
      }
    });
  });

  describe('two RedisStores on one Redis racing through groups (held)', () => {
    it('hands a setIfAbsent claim to exactly one caller and counts every increment once', async () => {
      const prefix = `${RUN_PREFIX}${randomUUID()}:`;
      const clock = new TestClock();
      const other = new Redis(sharedRedisUrl());
      const a = new RedisStore({ client: host, clock: clock.now, keyPrefix: prefix });
      const b = new RedisStore({ client: other, clock: clock.now, keyPrefix: prefix });
      try {
        const claims = await Promise.all(
          Array.from({ length: 300 }, (_, i) => (i % 2 ? a : b).setIfAbsent('claim', `c${i}`, 60_000)),
        );
        expect(claims.filter(Boolean)).toHaveLength(1);
        const counts = await Promise.all(
          Array.from({ length: 600 }, (_, i) => (i % 3 ? a : b).increment('counter', 1, 60_000)),
        );
        expect(new Set(counts.map((count) => count.value)).size).toBe(600);
        await expect(a.get('counter')).resolves.toBe('600');
      } finally {
        await a.close();
        await b.close();
        other.disconnect();
      }
    });
  });
});
