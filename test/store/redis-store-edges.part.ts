import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { VerificationOptionsError } from '../../src/core/option-rules.js';
import {
  connectNodeRedis,
  eventually,
  sharedRedisUrl,
  ThrowawayRedisServer,
} from '../support/redis-server.js';
import { HeldRedisClient } from '../support/held-redis.js';
import { TestClock } from './store-contract.js';

describe('store: redis-store-edges', () => {
  /**
   * RedisStore at the edges of what it is given: a command timeout that is not a positive finite number,
   * a URL's scheme in any case, and keys under its prefix that it did not write (another program's, an
   * older format's), on both client libraries.
   */
  const RUN_PREFIX = `pv-test:${randomUUID()}:edges:`;

  let ioredis: Redis;
  let nodeRedis: Awaited<ReturnType<typeof connectNodeRedis>>;

  beforeAll(async () => {
    ioredis = new Redis(sharedRedisUrl());
    nodeRedis = await connectNodeRedis(sharedRedisUrl());
  });

  afterAll(async () => {
    const keys = await ioredis.keys(`${RUN_PREFIX}*`);
    if (keys.length > 0) await ioredis.del(...keys);
    await ioredis.quit();
    await nodeRedis.close();
  });

  describe('RedisStore options', () => {
    it('without commandTimeoutMs, an operation Redis does not answer fails at 1 s: pending a tick before, "no answer within 1000 ms" at it', async () => {
      const held = new HeldRedisClient(ioredis);
      const store = new RedisStore({ client: held, keyPrefix: RUN_PREFIX });
      // The deadline's timer on jest's clock; sockets and the process' ticks run as they do.
      jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'clearImmediate', 'queueMicrotask'] });
      let read: Promise<unknown> = Promise.resolve();
      try {
        held.holding = true;
        const sent = held.nextSent();
        let outcome: unknown = 'pending';
        read = store.get('held').then(
          () => (outcome = 'answered'),
          (error: unknown) => (outcome = error),
        );
        await (
          await sent
        ).answered;
        const settle = async () => {
          for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
        };
        jest.advanceTimersByTime(999);
        await settle();
        expect(outcome).toBe('pending');
        jest.advanceTimersByTime(1);
        await settle();
        expect(outcome).toBeInstanceOf(VerificationStoreUnavailableError);
        expect((outcome as Error).message).toMatch(/no answer within 1000 ms/);
      } finally {
        jest.useRealTimers();
        held.release();
        await read;
        await store.close();
      }
    });

    it("a host's node-redis client the host closed: an operation fails at once, naming the client closed, not the deadline", async () => {
      const closed = await connectNodeRedis(sharedRedisUrl());
      await closed.close();
      const store = new RedisStore({ client: closed, keyPrefix: RUN_PREFIX, commandTimeoutMs: 10_000 });
      try {
        const error = await store.get('k').then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
        expect((error as Error).message).toMatch(/closed/i);
        expect((error as Error).message).not.toMatch(/no answer within/);
      } finally {
        await store.close();
      }
    });

    it('refuses a command timeout that is not a positive number a Node timer keeps, naming it and the value', () => {
      for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -1, 0, 2 ** 31]) {
        const make = () => new RedisStore({ client: ioredis, commandTimeoutMs: bad });
        expect(make).toThrow(VerificationOptionsError);
        expect(make).toThrow(
          `RedisStore: option "commandTimeoutMs" must be a positive number of at most 2147483647 ms (got ${bad})`,
        );
      }
      expect(() => new RedisStore({ client: ioredis, commandTimeoutMs: 0.5 })).not.toThrow();
      expect(() => new RedisStore({ client: ioredis, commandTimeoutMs: 2 ** 31 - 1 })).not.toThrow();
    });

    it('takes a redis:// or rediss:// URL in any case, and nothing that only contains one', async () => {
      for (const url of ['REDIS://127.0.0.1:1', 'Rediss://127.0.0.1:1']) {
        const store = new RedisStore({ url, commandTimeoutMs: 50 });
        await store.close();
      }
      for (const url of ['xredis://127.0.0.1:1', 'http://redis://127.0.0.1:1', 'redis:/127.0.0.1:1'])
        expect(() => new RedisStore({ url })).toThrow(
          /option "url" must start with redis:\/\/ or rediss:\/\//,
        );
    });
  });

  describe.each([
    ['a host ioredis client', () => ioredis],
    ['a host node-redis client', () => nodeRedis],
  ] as const)('RedisStore on %s: keys under its prefix it did not write', (_name, client) => {
    const clock = new TestClock();
    const foreign = [
      '99999999999999999',
      'no-expiry',
      ':leading-colon',
      'abc:not-a-time',
      'NaN:x',
      'inf:x',
      '1e400:x',
      '-:x',
      `${clock.now()}:expired-now`,
    ];

    it('reads each as absent, lets setIfAbsent take it and starts a counter over it', async () => {
      const prefix = `${RUN_PREFIX}${randomUUID()}:`;
      const store = new RedisStore({ client: client() as never, keyPrefix: prefix, clock: clock.now });
      for (const [i, raw] of foreign.entries()) await ioredis.set(`${prefix}k${i}`, raw);
      for (const i of foreign.keys()) await expect(store.get(`k${i}`)).resolves.toBeNull();
      for (const i of foreign.keys())
        await expect(store.setIfAbsent(`k${i}`, 'mine', 1000)).resolves.toBe(true);
      for (const i of foreign.keys()) await expect(store.get(`k${i}`)).resolves.toBe('mine');
      for (const [i, raw] of foreign.entries()) await ioredis.set(`${prefix}c${i}`, raw);
      for (const i of foreign.keys())
        await expect(store.increment(`c${i}`, 3, 1000)).resolves.toEqual({
          value: 3,
          expiresAt: clock.now() + 1000,
        });
      await store.close();
    });

    it('a live value one millisecond before its time, gone at it', async () => {
      const prefix = `${RUN_PREFIX}${randomUUID()}:`;
      const store = new RedisStore({ client: client() as never, keyPrefix: prefix, clock: clock.now });
      await ioredis.set(`${prefix}live`, `${clock.now() + 1}:v:with:colons`);
      await expect(store.get('live')).resolves.toBe('v:with:colons');
      await ioredis.set(`${prefix}live`, `${clock.now()}:v`);
      await expect(store.get('live')).resolves.toBeNull();
      await store.close();
    });
  });

  describe('RedisStore across an outage: on a host client that queues commands while offline (its default), or opened from a URL', () => {
    let server: ThrowawayRedisServer;
    beforeAll(async () => {
      server = await ThrowawayRedisServer.start();
    });
    afterAll(async () => {
      await server.stop();
    });

    const hosts = {
      ioredis: async () => {
        const client = new Redis(server.url);
        client.on('error', () => undefined);
        return { client, down: () => client.status !== 'ready', end: async () => client.disconnect() };
      },
      'node-redis': async () => {
        const client = await connectNodeRedis(server.url);
        return { client, down: () => !client.isReady, end: async () => client.destroy() };
      },
    };

    for (const [name, host] of Object.entries(hosts)) {
      it(`${name}: a write refused during an outage is never made after Redis returns`, async () => {
        const { client, down, end } = await host();
        const store = new RedisStore({ client: client as never, commandTimeoutMs: 300 });
        try {
          await store.set('probe', 'up', 60_000);
          await server.stop();
          // Once the client knows (a command already written when the socket dropped is the client's to resend).
          await eventually(async () => expect(down()).toBe(true), 5000);
          await expect(store.set('late', 'written-after-refusal', 60_000)).rejects.toThrow(
            VerificationStoreUnavailableError,
          );
          await expect(store.increment('late-count', 1, 60_000)).rejects.toThrow(
            VerificationStoreUnavailableError,
          );
          await server.start();
          await eventually(() => store.set('probe', 'back', 60_000), 10_000);
          await expect(store.get('late')).resolves.toBeNull();
          await expect(store.increment('late-count', 1, 60_000)).resolves.toMatchObject({ value: 1 });
        } finally {
          await store.close();
          await end();
        }
      });
    }

    for (const driver of ['ioredis', 'redis'] as const) {
      it(`a store opened from a URL with ${driver}: a write refused during an outage is never made after Redis returns`, async () => {
        const store = new RedisStore({
          url: server.url,
          driver,
          keyPrefix: `url-${driver}:`,
          commandTimeoutMs: 300,
        });
        try {
          await eventually(() => store.set('probe', 'up', 60_000), 10_000);
          await server.stop();
          await eventually(
            () => expect(store.get('probe')).rejects.toThrow(VerificationStoreUnavailableError),
            5000,
          );
          await expect(store.set('late', 'written-after-refusal', 60_000)).rejects.toThrow(
            VerificationStoreUnavailableError,
          );
          await server.start();
          await eventually(() => store.set('probe', 'back', 60_000), 10_000);
          await expect(store.get('late')).resolves.toBeNull();
        } finally {
          await store.close();
        }
      });
    }

    it.each(['ioredis', 'redis'] as const)(
      'a store opened from a URL with %s works again within about a second of Redis returning from a long outage',
      async (driver) => {
        const store = new RedisStore({ url: server.url, driver, keyPrefix: `back-${driver}:` });
        try {
          await eventually(() => store.set('probe', 'up', 60_000), 10_000);
          await server.stop();
          // Real time: the reconnection back-off is the client library's, not the module's clock.
          await new Promise((resolve) => setTimeout(resolve, 7000));
          await server.start();
          const back = Date.now();
          await eventually(() => store.set('probe', 'back', 60_000), 10_000);
          expect(Date.now() - back).toBeLessThan(2500);
        } finally {
          await store.close();
        }
      },
      30_000,
    );

    it("a closed store leaves no listener on the host's client, however many were made on it", async () => {
      for (const host of Object.values(hosts)) {
        const { client, end } = await host();
        const before = client.listenerCount('ready');
        for (let i = 0; i < 3; i++) {
          const store = new RedisStore({ client: client as never });
          await store.set('k', 'v', 1000);
          await store.close();
        }
        expect(client.listenerCount('ready')).toBe(before);
        await end();
      }
    });
  });
});
