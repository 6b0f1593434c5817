import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { KEYS_PER_CALL, RedisStore } from '../../src/store/redis.store.js';
import { VerificationOptionsError } from '../../src/core/option-rules.js';
import { sharedRedisUrl, ThrowawayRedisServer } from '../support/redis-server.js';
import { TestClock } from './store-contract.js';

describe('store: redis-key-groups-failures.attack', () => {
  /**
   * Attacks on RedisStore's grouped key operations (issue 45), part 2: how a group meets a host's test
   * clock, Redis forgetting its scripts, a full Redis, a one-shard cluster endpoint, close() and the
   * deadline's bound. Each test passes on 97062bbd (before the groups) unless it says otherwise.
   */
  const RUN_PREFIX = `pv-attack-t:${randomUUID()}:`;

  let host: Redis;
  beforeAll(() => {
    host = new Redis(sharedRedisUrl());
  });
  afterAll(async () => {
    await host.quit();
  });

  async function nodeRedisClient() {
    const client = createClient({ url: sharedRedisUrl() });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  describe('RedisStore in a host test suite that fakes timers (jest.useFakeTimers() defaults)', () => {
    afterEach(() => {
      jest.useRealTimers();
    });

    it('answers a key operation without the host running the fake clock (a host ioredis client)', async () => {
      const realSetTimeout = setTimeout;
      const store = new RedisStore({ client: host, keyPrefix: `${RUN_PREFIX}${randomUUID()}:` });
      await store.set('warm', 'v', 60_000);
      jest.useFakeTimers();
      const answer = await Promise.race([
        store.get('warm'),
        new Promise((resolve) => realSetTimeout(() => resolve('no answer after 2 s'), 2000)),
      ]);
      jest.useRealTimers();
      await store.close();
      expect(answer).toBe('v');
    });
  });

  // Held since issue 45 (test/store/redis-script-order.spec.ts): after Redis lost its scripts (a restart, a
  // failover, SCRIPT FLUSH), a grouped write reaches Redis before commands issued later without awaiting it.

  describe('RedisStore on a Redis that is full (maxmemory reached, noeviction)', () => {
    it('answers a read issued in the same tick as a write that Redis refuses', async () => {
      const server = await ThrowawayRedisServer.start();
      const admin = new Redis(server.url);
      const client = new Redis(server.url);
      const store = new RedisStore({ client });
      try {
        await store.set('record', 'stored', 60_000);
        await admin.config('SET', 'maxmemory-policy', 'noeviction');
        await admin.config('SET', 'maxmemory', '1');
        // Alone, the read answers and the write fails with OOM (as on RedisStore before the groups).
        await expect(store.get('record')).resolves.toBe('stored');
        const [read, write] = await Promise.allSettled([
          store.get('record'),
          store.set('other', 'v', 60_000),
        ]);
        // Redis' refusal as an outage naming the write, not a key that is not a counter.
        expect(write).toMatchObject({
          status: 'rejected',
          reason: { name: 'VerificationStoreUnavailableError', message: expect.stringMatching(/set.*OOM/) },
        });
        expect(read).toEqual({ status: 'fulfilled', value: 'stored' });
      } finally {
        await store.close();
        client.disconnect();
        await admin.quit();
        await server.stop();
      }
    });
  });

  describe('RedisStore with a plain client on a one-shard Redis Cluster endpoint (all 16,384 slots on one node)', () => {
    /**
     * A managed "cluster mode" database of one shard reached with a plain client: every key is on the node it
     * talks to, yet Redis refuses a script whose keys span slots (CROSSSLOT). Each test has a store of its own
     * (its first group) under a prefix of its own.
     */
    let dir: string;
    let server: ThrowawayRedisServer;
    let client: Redis;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'pv-attack-t-shard-'));
      server = await ThrowawayRedisServer.start({
        args: (port) => [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
        ],
      });
      client = new Redis(server.url);
      await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
      for (let i = 0; !/cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO'))); i++) {
        if (i > 100) throw new Error('the one-node cluster did not reach cluster_state:ok');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    afterAll(async () => {
      client.disconnect();
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    async function oneShard(run: (store: RedisStore, prefix: string, clock: TestClock) => Promise<void>) {
      const clock = new TestClock();
      const prefix = `pv-shard:${randomUUID()}:`;
      const store = new RedisStore({ client, keyPrefix: prefix, clock: clock.now });
      try {
        await run(store, prefix, clock);
      } finally {
        await store.close();
      }
    }

    it('answers key operations issued together (each script of one key worked before the groups)', () =>
      oneShard(async (store, _prefix, clock) => {
        // The first group a flood of KEYS_PER_CALL + 1: its last call (one key) runs, the first is refused;
        // each counter is counted once.
        const flood = await Promise.all(
          Array.from({ length: KEYS_PER_CALL + 1 }, (_, i) => store.increment(`flood-${i}`, 1, 60_000)),
        );
        expect(flood.every(({ value }) => value === 1)).toBe(true);
        await expect(store.increment('alone', 1, 60_000)).resolves.toEqual({
          value: 1,
          expiresAt: clock.now() + 60_000,
        });
        await expect(
          Promise.all([store.increment('a', 1, 60_000), store.setIfAbsent('b', 'v', 60_000), store.get('c')]),
        ).resolves.toEqual([{ value: 1, expiresAt: clock.now() + 60_000 }, true, null]);
      }));

    it('writes a key in the order issued when a one-key group was the first answered (a later group waits for the first of several keys)', () =>
      oneShard(async (store) => {
        // A group of one key answers first: the endpoint has not yet refused a group of two slots.
        await store.set('x', 'v', 60_000);
        // Then two slots at once (refused CROSSSLOT, then each alone) and, a tick later, one of their keys
        // again: the later write must wait for the refusal, not land first and be overwritten.
        const first = Promise.all([store.set('k', '1', 60_000), store.set('j', '1', 60_000)]);
        await Promise.resolve();
        await Promise.resolve();
        const later = store.set('k', '2', 60_000);
        await Promise.all([first, later]);
        await expect(store.get('k')).resolves.toBe('2');
      }));

    it('fails the read Redis refuses, alone, when the first group goes a key at a time (never answers it absent)', () =>
      oneShard(async (store, prefix, clock) => {
        // Reads of two slots (one MGET, refused CROSSSLOT), so each goes alone. One key of the store's prefix
        // was written by someone else as a hash: Redis refuses its GET (WRONGTYPE), as it would refuse any
        // command of the fallback it cannot run; the read fails, as on a cluster, rather than read as absent.
        await client.hset(`${prefix}h`, 'field', 'x');
        const answers = await Promise.allSettled([
          store.get('h'),
          store.get('c'),
          store.increment('a', 1, 60_000),
          store.setIfAbsent('b', 'v', 60_000),
        ]);
        expect(answers.map((answer) => answer.status)).toEqual([
          'rejected',
          'fulfilled',
          'fulfilled',
          'fulfilled',
        ]);
        expect(answers.slice(1).map((answer) => (answer as PromiseFulfilledResult<unknown>).value)).toEqual([
          null,
          { value: 1, expiresAt: clock.now() + 60_000 },
          true,
        ]);
      }));
  });

  describe('RedisStore.close() in the tick its last writes were issued', () => {
    // Its connection open, or still opening (a short script, a shutdown just after boot): close() waits for both.
    for (const [driver, opened] of [
      ['ioredis', true],
      ['redis', true],
      ['ioredis', false],
      ['redis', false],
    ] as const) {
      it(`completes the writes issued before close() (store opened from a URL, ${driver}, ${opened ? 'its connection open' : 'its connection still opening'})`, async () => {
        const prefix = `${RUN_PREFIX}${randomUUID()}:`;
        const store = new RedisStore({ url: sharedRedisUrl(), driver, keyPrefix: prefix });
        if (opened) {
          await store.ready();
          await store.get('warm');
        }
        const writes = Promise.allSettled([store.set('a', 'v', 60_000), store.increment('b', 1, 60_000)]);
        await store.close();
        const answers = await writes;
        expect(answers.map((answer) => answer.status)).toEqual(['fulfilled', 'fulfilled']);
        expect(await host.exists(`${prefix}a`, `${prefix}b`)).toBe(2);
      });
    }

    it('completes a write issued before close() on a host node-redis client', async () => {
      const client = await nodeRedisClient();
      const prefix = `${RUN_PREFIX}${randomUUID()}:`;
      const store = new RedisStore({ client, keyPrefix: prefix });
      try {
        const writes = Promise.allSettled([store.set('a', 'v', 60_000), store.set('b', 'v', 60_000)]);
        await store.close();
        expect((await writes).map((answer) => answer.status)).toEqual(['fulfilled', 'fulfilled']);
      } finally {
        await client.close();
      }
    });
  });

  describe('RedisStore commandTimeoutMs at its bound (before the groups too)', () => {
    it('either refuses a timeout setTimeout cannot hold at boot, naming it, or waits for a Redis answering in 20 ms', async () => {
      // The host's ioredis client on a Redis that answers in 20 ms (a busy network).
      const slowHost = {
        status: 'ready',
        call: async (command: string, ...args: string[]) => {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return host.call(command, ...args);
        },
        on: () => undefined,
        removeListener: () => undefined,
        quit: async () => 'OK',
        disconnect: () => undefined,
      };
      const made = ((): unknown => {
        try {
          return new RedisStore({
            client: slowHost,
            keyPrefix: `${RUN_PREFIX}${randomUUID()}:`,
            commandTimeoutMs: 2 ** 31,
          });
        } catch (error) {
          return error;
        }
      })();
      const outcome =
        made instanceof RedisStore
          ? await made.get('missing').then(
              (value) => value,
              (error: unknown) => error,
            )
          : made;
      if (made instanceof RedisStore) await made.close();
      // Node runs a longer timer after 1 ms: every operation fails 'no answer within 2147483648 ms'.
      expect(
        outcome === null ||
          (outcome instanceof VerificationOptionsError && /commandTimeoutMs/.test(outcome.message)),
      ).toBe(true);
    });
  });
});
