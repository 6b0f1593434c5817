import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { KEYS_PER_CALL, RedisStore, type RedisStoreOptions } from '../../src/store/redis.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { VerificationOptionsError } from '../../src/core/option-rules.js';
import {
  connectNodeRedis,
  eventually,
  sharedRedisUrl,
  ThrowawayRedisServer,
} from '../support/redis-server.js';
import { describeStoreContract, TestClock } from './store-contract.js';

describe('store: redis.store', () => {
  /** Every run gets its own prefix: the shared Redis may serve other suites at the same time. */
  const RUN_PREFIX = `pv-test:${randomUUID()}:`;

  /**
   * A store that opened its own connection, once that connection answers: loading the client
   * library and connecting can take longer than a short command timeout on a busy machine, and
   * that start-up is not what the tests measure.
   */
  async function connected(store: RedisStore): Promise<RedisStore> {
    await eventually(() => store.get('connection-probe'), 10_000);
    return store;
  }

  /** How long `operation` takes to reject, and with what. */
  async function rejection(
    operation: () => Promise<unknown>,
  ): Promise<{ error: unknown; elapsedMs: number }> {
    const started = Date.now();
    try {
      await operation();
    } catch (error) {
      return { error, elapsedMs: Date.now() - started };
    }
    throw new Error('the operation succeeded while Redis was down');
  }

  let hostIoredis: Redis;
  let hostNodeRedis: Awaited<ReturnType<typeof connectNodeRedis>>;

  beforeAll(async () => {
    hostIoredis = new Redis(sharedRedisUrl());
    hostNodeRedis = await connectNodeRedis(sharedRedisUrl());
  });

  afterAll(async () => {
    await hostIoredis.quit();
    await hostNodeRedis.close();
  });

  describeStoreContract('RedisStore with a host ioredis client', {
    sharesState: true,
    create: async (clock, namespace) =>
      new RedisStore({ client: hostIoredis, clock, keyPrefix: `${RUN_PREFIX}ioredis:${namespace}:` }),
  });

  describeStoreContract('RedisStore with a host node-redis client', {
    sharesState: true,
    create: async (clock, namespace) =>
      new RedisStore({ client: hostNodeRedis, clock, keyPrefix: `${RUN_PREFIX}node-redis:${namespace}:` }),
  });

  describeStoreContract('RedisStore opened from a URL (ioredis)', {
    sharesState: true,
    create: async (clock, namespace) =>
      connected(
        new RedisStore({ url: sharedRedisUrl(), clock, keyPrefix: `${RUN_PREFIX}url:${namespace}:` }),
      ),
  });

  describeStoreContract('RedisStore opened from a URL (node-redis)', {
    sharesState: true,
    create: async (clock, namespace) =>
      connected(
        new RedisStore({
          url: sharedRedisUrl(),
          driver: 'redis',
          clock,
          keyPrefix: `${RUN_PREFIX}url-nr:${namespace}:`,
        }),
      ),
  });

  describe('RedisStore on Redis itself', () => {
    it('leaves a client it did not create open after close()', async () => {
      const viaIoredis = new RedisStore({ client: hostIoredis, keyPrefix: RUN_PREFIX });
      const viaNodeRedis = new RedisStore({ client: hostNodeRedis, keyPrefix: RUN_PREFIX });
      await viaIoredis.set('k', 'v', 1000);
      await viaNodeRedis.set('k', 'v', 1000);
      await viaIoredis.close();
      await viaNodeRedis.close();
      await expect(hostIoredis.ping()).resolves.toBe('PONG');
      await expect(hostNodeRedis.ping()).resolves.toBe('PONG');
    });

    it('stores under its key prefix, with a real expiry as garbage collection', async () => {
      const clock = new TestClock();
      const prefix = `${RUN_PREFIX}raw:`;
      const store = new RedisStore({ client: hostIoredis, keyPrefix: prefix, clock: clock.now });
      await store.set('session', '{"a":1}', 30_000);
      await store.increment('count', 1, 10_000);
      await store.schedule('due', 'm', clock.now());
      expect(await hostIoredis.exists('session')).toBe(0);
      expect(await hostIoredis.get(`${prefix}session`)).toBe(`${clock.now() + 30_000}:{"a":1}`);
      const sessionTtl = await hostIoredis.pttl(`${prefix}session`);
      expect(sessionTtl).toBeGreaterThan(25_000);
      expect(sessionTtl).toBeLessThanOrEqual(30_000);
      const counterTtl = await hostIoredis.pttl(`${prefix}count`);
      expect(counterTtl).toBeGreaterThan(5000);
      expect(counterTtl).toBeLessThanOrEqual(10_000);
      await store.increment('count', 1, 10_000);
      // A live counter keeps its expiry: neither extended nor lost (PTTL -1 would be a key that never expires).
      const keptTtl = await hostIoredis.pttl(`${prefix}count`);
      expect(keptTtl).toBeGreaterThan(5000);
      expect(keptTtl).toBeLessThanOrEqual(counterTtl);
      expect(await hostIoredis.zscore(`${prefix}due`, 'm')).toBe(String(clock.now()));
      await hostIoredis.del(`${prefix}session`, `${prefix}count`, `${prefix}due`);
      await store.close();
    });

    it('loads its scripts again after Redis forgot them (SCRIPT FLUSH)', async () => {
      const server = await ThrowawayRedisServer.start();
      const isolated = await connected(new RedisStore({ url: server.url, keyPrefix: `${RUN_PREFIX}flush:` }));
      try {
        await expect(isolated.setIfAbsent('k', 'v', 1000)).resolves.toBe(true);
        const admin = new Redis(server.url);
        await admin.script('FLUSH');
        await admin.quit();
        await expect(isolated.setIfAbsent('k', 'v', 1000)).resolves.toBe(false);
        await expect(isolated.increment('c', 2, 1000)).resolves.toMatchObject({ value: 2 });
      } finally {
        await isolated.close();
        await server.stop();
      }
    });

    /**
     * The keys of the grouping test live in real Redis time while the test counts commands: a minute, so that on a
     * loaded machine none expires before the test reads it again (a 500 ms key did, with CI's two other Node lines
     * side by side). Expiry at the bound is the contract suites' (store-contract).
     */
    const TTL_MS = 60_000;
    for (const driver of ['ioredis', 'redis'] as const) {
      it(`sends the key operations issued together as one command, each answered as its method (${driver})`, async () => {
        const server = await ThrowawayRedisServer.start();
        const admin = new Redis(server.url);
        const commands = async (): Promise<Record<string, number>> =>
          Object.fromEntries(
            [...(await admin.info('commandstats')).matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => [
              m[1]!,
              Number(m[2]),
            ]),
          );
        const clock = new TestClock();
        const store = await connected(new RedisStore({ url: server.url, driver, clock: clock.now }));
        try {
          await store.set('old', 'value', 60_000);
          await admin.config('RESETSTAT');
          const at = clock.now();
          const counters = Array.from({ length: 20 }, (_, i) => store.increment(`c${i}`, i + 1, TTL_MS));
          const [answers, old, claim, gone] = await Promise.all([
            Promise.all(counters),
            store.get('old'),
            store.setIfAbsent('old', 'no', TTL_MS),
            store.delete('old'),
            store.set('new', 'v', TTL_MS),
          ]);
          expect(answers).toEqual(
            Array.from({ length: 20 }, (_, i) => ({ value: i + 1, expiresAt: at + TTL_MS })),
          );
          expect([old, claim, gone]).toEqual(['value', false, undefined]);
          const sent = await commands();
          // The script's text goes once: its first call is EVAL, the calls after it EVALSHA.
          expect(sent.eval).toBe(1);
          expect(sent.get).toBe(22); // inside the script: every increment, the get and the setIfAbsent
          // Reads of keys the group does not write are one MGET beside the script.
          await admin.config('RESETSTAT');
          const [read, , reread] = await Promise.all([
            Promise.all(Array.from({ length: 5 }, (_, i) => store.get(`c${i + 1}`))),
            store.increment('c0', 1, TTL_MS),
            store.get('c0'),
          ]);
          expect(read).toEqual(['2', '3', '4', '5', '6']);
          expect(reread).toBe('2');
          expect(await commands()).toMatchObject({ mget: 1, evalsha: 1, get: 2 }); // the increment's and the read after it
          expect((await commands()).eval).toBeUndefined();
          // A group of one is its plain command.
          await admin.config('RESETSTAT');
          await expect(store.get('new')).resolves.toBe('v');
          expect(await commands()).not.toHaveProperty('eval');
          expect(await commands()).not.toHaveProperty('evalsha');
          // A flood issued at once is split into calls of KEYS_PER_CALL keys, answered in order.
          await admin.config('RESETSTAT');
          const flood = 2 * KEYS_PER_CALL + 1;
          const counted = await Promise.all(
            Array.from({ length: flood }, (_, i) => store.increment(`f${i}`, i, TTL_MS)),
          );
          expect(counted.map(({ value }) => value)).toEqual(Array.from({ length: flood }, (_, i) => i));
          expect((await commands()).evalsha).toBe(3);
          // After Redis forgot the script, a group alone on the wire (nothing sent after it) is answered
          // NOSCRIPT and sent again with the script's text; the next is EVALSHA again.
          await admin.script('FLUSH');
          await admin.config('RESETSTAT');
          await expect(
            Promise.all([store.increment('c0', 1, TTL_MS), store.setIfAbsent('new', 'x', TTL_MS)]),
          ).resolves.toEqual([{ value: 3, expiresAt: at + TTL_MS }, false]);
          expect(await commands()).toMatchObject({ evalsha: 1, eval: 1 });
          await store.batch([
            { op: 'increment', key: 'c0', by: 1, ttlMs: TTL_MS },
            { op: 'increment', key: 'c1', by: 1, ttlMs: TTL_MS },
          ]);
          expect(await commands()).toMatchObject({ evalsha: 2, eval: 1 });
        } finally {
          await store.close();
          await admin.quit();
          await server.stop();
        }
      });

      it(`tells a listener that asked when its subscription was lost and is back, then delivers again (${driver})`, async () => {
        const server = await ThrowawayRedisServer.start();
        const admin = new Redis(server.url);
        const store = await connected(new RedisStore({ url: server.url, driver }));
        try {
          const heard: string[] = [];
          let gaps = 0;
          let quiet = 0;
          await store.subscribe(
            'status',
            (message) => void heard.push(message),
            () => void gaps++,
          );
          await store.subscribe('status', () => undefined);
          await store.subscribe(
            'other',
            () => undefined,
            () => void quiet++,
          );
          // A listener that left is told nothing more.
          let left = 0;
          (
            await store.subscribe(
              'status',
              () => undefined,
              () => void left++,
            )
          )();
          await store.publish('status', 'before');
          await eventually(async () => expect(heard).toEqual(['before']), 2000);
          expect(gaps).toBe(0);
          // The subscriber connection drops (a network blip); the driver connects and subscribes again.
          await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
          await eventually(async () => expect([gaps, quiet]).toEqual([1, 1]), 5000);
          // Told once it is subscribed again: what is published now arrives.
          await store.publish('status', 'after');
          await eventually(async () => expect(heard).toEqual(['before', 'after']), 2000);
          expect([gaps, left]).toEqual([1, 0]);
        } finally {
          await store.close();
          await admin.quit();
          await server.stop();
        }
      });

      it(`closes the connection it opened from a URL (${driver})`, async () => {
        const server = await ThrowawayRedisServer.start();
        const admin = new Redis(server.url);
        const connectedClients = async (): Promise<number> =>
          Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))?.[1]);
        try {
          const store = await connected(new RedisStore({ url: server.url, driver }));
          expect(await connectedClients()).toBe(2);
          await store.close();
          await eventually(async () => expect(await connectedClients()).toBe(1), 2000);
        } finally {
          await admin.quit();
          await server.stop();
        }
      });
    }

    it('rejects options that are not one client or one URL', () => {
      // A bad option is the package's options error naming the field, as at the module's boot.
      const oneOf = /^RedisStore: option "client" or `url`: give exactly one/;
      expect(() => new RedisStore({} as RedisStoreOptions)).toThrow(VerificationOptionsError);
      expect(() => new RedisStore({} as RedisStoreOptions)).toThrow(oneOf);
      expect(() => new RedisStore({ client: hostIoredis, url: sharedRedisUrl() })).toThrow(oneOf);
      expect(() => new RedisStore({ client: {} as never })).toThrow(
        /ioredis client .* or a node-redis client/,
      );
      expect(() => new RedisStore({ url: 'http://localhost:6379' })).toThrow(
        /^RedisStore: option "url" must start with redis:\/\/ or rediss:\/\//,
      );
      expect(() => new RedisStore({ url: sharedRedisUrl(), commandTimeoutMs: 0 })).toThrow(
        /^RedisStore: option "commandTimeoutMs" must be a positive number of at most 2147483647 ms \(got 0\)/,
      );
    });
  });

  describe('RedisStore while Redis is down', () => {
    const password = `pw-${randomUUID()}`;
    const commandTimeoutMs = 300;
    /** Room for a busy machine's event loop; a queueing client would hang far longer. */
    const SCHEDULING_SLACK_MS = 700;
    let server: ThrowawayRedisServer;
    const cleanups: (() => Promise<unknown>)[] = [];

    beforeAll(async () => {
      server = await ThrowawayRedisServer.start({ password });
    });

    afterEach(async () => {
      await server.start();
      for (const cleanup of cleanups.splice(0)) await cleanup();
    });

    afterAll(async () => {
      await server.stop();
    });

    const variants: [string, () => Promise<RedisStore>][] = [
      [
        'opened from a URL with ioredis',
        () => connected(new RedisStore({ url: server.url, commandTimeoutMs })),
      ],
      [
        'opened from a URL with node-redis',
        async () => new RedisStore({ url: server.url, driver: 'redis', commandTimeoutMs }),
      ],
      [
        'on a host ioredis client',
        async () => {
          const client = new Redis(server.url);
          client.on('error', () => undefined);
          cleanups.push(async () => client.disconnect());
          return new RedisStore({ client, commandTimeoutMs });
        },
      ],
      [
        'on a host node-redis client',
        async () => {
          const client = await connectNodeRedis(server.url);
          cleanups.push(async () => client.destroy());
          return new RedisStore({ client, commandTimeoutMs });
        },
      ],
    ];

    for (const [name, makeStore] of variants) {
      it(`${name}: every operation fails fast as unavailable, and works again when Redis returns`, async () => {
        const store = await connected(await makeStore());
        cleanups.push(() => store.close());
        await store.set('k', 'before', 60_000);
        await store.schedule('q', 'm', store.now());
        // A script Redis has run: its calls go by hash until Redis fails.
        await store.increment('c', 1, 60_000);

        await server.stop();
        const operations: (() => Promise<unknown>)[] = [
          () => store.get('k'),
          () => store.set('k', 'v', 1000),
          () => store.setIfAbsent('k', 'v', 1000),
          () => store.delete('k'),
          () => store.increment('c', 1, 1000),
          () => store.schedule('q', 'm', 0),
          () => store.claimDue('q', 1, 1000),
          () => store.unschedule('q', 'm'),
          () => store.queueSize('q'),
        ];
        // The first alone (the store's first sight of the outage), then the others side by side: each
        // waits at most the command timeout, and a client that hangs after a first failure still fails.
        const [first, ...others] = operations;
        const rejections = [await rejection(first!), ...(await Promise.all(others.map(rejection)))];
        for (const { error, elapsedMs } of rejections) {
          expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
          expect(elapsedMs).toBeLessThan(commandTimeoutMs + SCHEDULING_SLACK_MS);
          const text = `${(error as Error).message}\n${(error as Error).stack}`;
          expect(text).not.toContain(password);
          expect((error as Error).cause).toBeUndefined();
        }

        await server.start();
        // The server came back empty (no persistence): the store works on it without being re-created.
        await eventually(() => store.set('k', 'after', 60_000), 10_000);
        // The scripts went with Redis: a flood (two script calls on the wire together) is answered whole.
        const flood = await Promise.all(
          Array.from({ length: KEYS_PER_CALL + 1 }, (_, i) => store.increment(`f${i}`, 1, 1000)),
        );
        expect(flood.map(({ value }) => value)).toEqual(Array<number>(KEYS_PER_CALL + 1).fill(1));
        await expect(store.get('k')).resolves.toBe('after');
        await expect(store.setIfAbsent('fresh', 'v', 1000)).resolves.toBe(true);
        await expect(store.increment('c', 1, 1000)).resolves.toMatchObject({ value: 1 });
      });
    }

    it('on a hung Redis: operations reject within the timeout and close() does not hang', async () => {
      const stores = await Promise.all([
        connected(new RedisStore({ url: server.url, commandTimeoutMs })),
        connected(new RedisStore({ url: server.url, driver: 'redis', commandTimeoutMs })),
      ]);
      server.freeze();
      try {
        for (const store of stores) {
          const { error, elapsedMs } = await rejection(() => store.increment('c', 1, 1000));
          expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
          expect((error as Error).message).toMatch(/no answer within 300 ms/);
          expect(elapsedMs).toBeLessThan(commandTimeoutMs + SCHEDULING_SLACK_MS);
          const closing = Date.now();
          await store.close();
          expect(Date.now() - closing).toBeLessThan(commandTimeoutMs + SCHEDULING_SLACK_MS);
        }
      } finally {
        server.thaw();
      }
    });

    for (const driver of ['ioredis', 'redis'] as const) {
      it(`opened from a URL (${driver}) while Redis is down: fails as unavailable, then works once Redis is up`, async () => {
        await server.stop();
        const store = new RedisStore({ url: server.url, driver, commandTimeoutMs });
        cleanups.push(() => store.close());
        const { error, elapsedMs } = await rejection(() => store.get('k'));
        expect(error).toBeInstanceOf(VerificationStoreUnavailableError);
        expect(elapsedMs).toBeLessThan(commandTimeoutMs + SCHEDULING_SLACK_MS);
        await server.start();
        await eventually(() => store.set('k', 'v', 60_000), 10_000);
        await expect(store.get('k')).resolves.toBe('v');
      });
    }
  });
});
