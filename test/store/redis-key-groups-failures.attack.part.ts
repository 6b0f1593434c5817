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
    it('answers key operations issued together (each script of one key worked before the groups)', async () => {
      // A managed "cluster mode" database of one shard reached with a plain client: every key is on
      // the node it talks to, yet Redis refuses a script whose keys span slots (CROSSSLOT).
      const dir = mkdtempSync(join(tmpdir(), 'pv-attack-t-shard-'));
      const server = await ThrowawayRedisServer.start({
        args: (port) => [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          join(dir, `nodes-${port}.conf`),
        ],
      });
      const client = new Redis(server.url);
      const clock = new TestClock();
      const store = new RedisStore({ client, clock: clock.now });
      try {
        await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
        for (let i = 0; !/cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO'))); i++) {
          if (i > 100) throw new Error('the one-node cluster did not reach cluster_state:ok');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
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
      } finally {
        await store.close();
        client.disconnect();
        await server.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  describe('RedisStore.close() in the tick its last writes were issued', () => {
    for (const driver of ['ioredis', 'redis'] as const) {
      it(`completes the writes issued before close() (store opened from a URL, ${driver})`, async () => {
        const prefix = `${RUN_PREFIX}${randomUUID()}:`;
        const store = new RedisStore({ url: sharedRedisUrl(), driver, keyPrefix: prefix });
        await store.ready();
        await store.get('warm');
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
