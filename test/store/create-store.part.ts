import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { createStore, isVerificationStore } from '../../src/store/create-store.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { detectRedisDriver } from '../../src/store/redis-command-runner.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { TestClock } from './store-contract.js';

/**
 * VerificationStore's methods, written out rather than read from STORE_METHODS: a method left out of that
 * list would leave its row out of the table below too.
 */
const EVERY_STORE_METHOD = [
  'now',
  'get',
  'set',
  'setIfAbsent',
  'delete',
  'increment',
  'schedule',
  'claimDue',
  'unschedule',
  'queueSize',
  'close',
] as const;

describe('store: create-store', () => {
  let hostIoredis: Redis;

  beforeAll(() => {
    hostIoredis = new Redis(sharedRedisUrl());
  });

  afterAll(async () => {
    await hostIoredis.quit();
  });

  /** The store answers on `clock`: a value set now is gone once the clock passes its TTL. */
  async function expectStoreOnClock(store: VerificationStore, clock: TestClock): Promise<void> {
    await store.set('k', 'v', 1000);
    await expect(store.get('k')).resolves.toBe('v');
    clock.advance(1000);
    await expect(store.get('k')).resolves.toBeNull();
  }

  describe('createStore', () => {
    it('makes a MemoryStore on the module clock when no store is configured', async () => {
      const clock = new TestClock();
      const store = createStore(undefined, clock.now);
      expect(store).toBeInstanceOf(MemoryStore);
      await expectStoreOnClock(store, clock);
      await store.close();
    });

    it('uses a store instance as given', async () => {
      const own = new MemoryStore();
      expect(createStore(own, Date.now)).toBe(own);
      await own.close();
    });

    it('wraps a host client in a RedisStore on the module clock and the given prefix', async () => {
      const clock = new TestClock();
      const prefix = `pv-test:${randomUUID()}:`;
      const store = createStore({ redis: hostIoredis, keyPrefix: prefix }, clock.now);
      expect(store).toBeInstanceOf(RedisStore);
      await store.set('probe', 'v', 60_000);
      expect(await hostIoredis.exists(`${prefix}probe`)).toBe(1);
      await store.delete('probe');
      await expectStoreOnClock(store, clock);
      await store.close();
      await expect(hostIoredis.ping()).resolves.toBe('PONG');
    });

    it('opens a RedisStore from a URL, with `pv:` as the default prefix', async () => {
      const clock = new TestClock();
      const store = createStore({ url: sharedRedisUrl() }, clock.now);
      expect(store).toBeInstanceOf(RedisStore);
      const key = `create-store-test:${randomUUID()}`;
      await store.set(key, 'v', 60_000);
      expect(await hostIoredis.exists(`pv:${key}`)).toBe(1);
      await store.delete(key);
      await expectStoreOnClock(store, clock);
      await store.close();
    });

    it('opens a RedisStore from a rediss:// (TLS) URL, whatever the scheme’s case', async () => {
      for (const url of ['rediss://127.0.0.1:1', 'REDISS://127.0.0.1:1', 'Redis://127.0.0.1:1']) {
        const store = createStore({ url }, Date.now);
        expect(store).toBeInstanceOf(RedisStore);
        await store.close();
      }
    });

    it('rejects a store option it cannot use, naming the field and keeping the URL out of the message', () => {
      expect(() => createStore({ redis: {} }, Date.now)).toThrow(
        /^VerificationModule: option "store\.redis" must be/,
      );
      expect(() => createStore({ url: 'http://user:secret@host' }, Date.now)).toThrow(
        /^VerificationModule: option "store\.url" must be/,
      );
      expect(() => createStore({ url: 'http://user:secret@host' }, Date.now)).not.toThrow(/secret/);
      expect(() => createStore({ redis: hostIoredis, keyPrefix: 5 as never }, Date.now)).toThrow(
        'VerificationModule: option "store.keyPrefix" must be a string',
      );
      // A URL that only contains a redis:// part further on is not one.
      expect(() => createStore({ url: 'http://proxy/redis://host' }, Date.now)).toThrow(
        /^VerificationModule: option "store\.url" must be/,
      );
      // `store: null` (an env-driven config left empty) is refused as the option, not a TypeError.
      expect(() => createStore(null as never, Date.now)).toThrow(
        /^VerificationModule: option "store" must be/,
      );
      // The host's client itself, not `{ redis: client }`: it has get, set and more, but is no store.
      expect(() => createStore(hostIoredis as never, Date.now)).toThrow(
        /^VerificationModule: option "store" must be/,
      );
      expect(() => createStore(createClient() as never, Date.now)).toThrow(
        /^VerificationModule: option "store" must be/,
      );
      expect(() => createStore('redis://localhost' as never, Date.now)).toThrow(
        /^VerificationModule: option "store" must be/,
      );
    });
  });

  describe('isVerificationStore', () => {
    it('tells a store instance from a description of one', async () => {
      const store = new MemoryStore();
      expect(isVerificationStore(store)).toBe(true);
      expect(isVerificationStore({ redis: hostIoredis })).toBe(false);
      expect(isVerificationStore({ url: 'redis://localhost' })).toBe(false);
      expect(isVerificationStore(undefined)).toBe(false);
      await store.close();
    });

    it.each(EVERY_STORE_METHOD)(
      "a host's store without %s is refused at boot, naming `store`, not accepted to fail later",
      async (missing) => {
        const store = new MemoryStore();
        const host: Record<string, unknown> = {};
        for (const method of EVERY_STORE_METHOD)
          if (method !== missing)
            host[method] = (store[method as keyof MemoryStore] as (...a: unknown[]) => unknown).bind(store);
        expect(isVerificationStore(host)).toBe(false);
        expect(() => createStore(host as never, Date.now)).toThrow(
          /^VerificationModule: option "store" must be/,
        );
        await store.close();
      },
    );
  });

  describe('detectRedisDriver', () => {
    it('recognises ioredis and node-redis clients and clusters, and nothing else', () => {
      const ioredis = new Redis({ lazyConnect: true });
      const ioredisCluster = new Cluster([], { lazyConnect: true });
      expect(detectRedisDriver(ioredis)).toBe('ioredis');
      expect(detectRedisDriver(ioredisCluster)).toBe('ioredis');
      expect(detectRedisDriver(createClient())).toBe('node-redis');
      expect(detectRedisDriver(createCluster({ rootNodes: [] }))).toBe('node-redis-cluster');
      expect(detectRedisDriver({ get: () => undefined })).toBeUndefined();
      expect(detectRedisDriver(null)).toBeUndefined();
      ioredis.disconnect();
      ioredisCluster.disconnect();
    });
  });
});
