/**
 * Which Redis library a store opened from a URL ends up on when one of the optional peers is missing (or
 * seen only through its default export), and what a host reads at boot when neither is there. The libraries are replaced by jest's module mocks (an import
 * that fails as Node fails it for a package not installed), so this spec has its modules to itself: no merged
 * file imports it. The whole boot with both packages really removed is test/operations/optional-peers.spec's
 * (the built dist/, out of the mutation run's reach).
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { sharedRedisUrl } from '../../test/support/redis-server.js';

// Before any mock is in place.
const { default: realIoRedis } = await import('ioredis');

/** What `import()` throws for a package that is not installed. */
function notInstalled(name: string): Error {
  return Object.assign(new Error(`Cannot find package '${name}'`), { code: 'ERR_MODULE_NOT_FOUND' });
}

/** The store's modules, loaded afresh with `mocks` in place of the libraries they name. */
async function loadWith(mocks: Record<string, () => unknown>) {
  jest.resetModules();
  for (const [name, factory] of Object.entries(mocks))
    jest.unstable_mockModule(name, factory as () => Record<string, unknown>);
  // One at a time: jest's ESM loader links a module once, and two imports sharing one would race.
  const { openStore } = await import('./create-store.js');
  const { RedisStore } = await import('./redis.store.js');
  const { MemoryStore } = await import('./memory.store.js');
  return { RedisStore, openStore, MemoryStore };
}

const missing = (name: string) => () => {
  throw notInstalled(name);
};

afterEach(() => {
  jest.resetModules();
});

describe('a store opened from a URL, with a Redis library missing or seen through a CommonJS interop', () => {
  it('works on node-redis when ioredis is not installed', async () => {
    const { RedisStore } = await loadWith({ ioredis: missing('ioredis') });
    const store = new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv:drivers:${process.pid}:` });
    try {
      await store.ready();
      await store.set('k', 'v', 60_000);
      await expect(store.get('k')).resolves.toBe('v');
    } finally {
      await store.close();
    }
  });

  it('works on an ioredis seen only through its default export (a CommonJS interop)', async () => {
    const { RedisStore } = await loadWith({
      ioredis: () => ({ default: realIoRedis }),
      redis: missing('redis'),
    });
    const store = new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv:drivers:${process.pid}:` });
    try {
      await store.set('k', 'v', 60_000);
      await expect(store.get('k')).resolves.toBe('v');
    } finally {
      await store.close();
    }
  });

  it('fails the boot telling the host what to install when neither library is', async () => {
    const { openStore } = await loadWith({ ioredis: missing('ioredis'), redis: missing('redis') });
    await expect(openStore({ url: sharedRedisUrl() }, Date.now)).rejects.toMatchObject({
      name: 'VerificationOptionsError',
      field: 'store.url',
      message:
        'VerificationModule: option "store.url" needs a Redis client library: run `npm i ioredis` (or `npm i redis`)',
    });
  });

  it('a RedisStore the host opens from a URL with neither library installed: ready() and each operation name both, ioredis first', async () => {
    const { RedisStore } = await loadWith({ ioredis: missing('ioredis'), redis: missing('redis') });
    const store = new RedisStore({ url: sharedRedisUrl() });
    const named =
      'RedisStore: connecting by URL needs a Redis client library; install one of: ioredis, redis (npm i ioredis)';
    await expect(store.ready()).rejects.toThrow(named);
    await expect(store.get('k')).rejects.toThrow(named);
    await expect(store.close()).resolves.toBeUndefined();
  });

  it('fails the boot with its own error when an installed library fails to load, not "install one"', async () => {
    const broken = new Error('ioredis: cannot load its parser');
    const { openStore } = await loadWith({
      ioredis: () => {
        throw broken;
      },
    });
    await expect(openStore({ url: sharedRedisUrl() }, Date.now)).rejects.toBe(broken);
  });

  it('opens the stores that need no library without waiting on one: none, and a host’s own', async () => {
    const { openStore, MemoryStore, RedisStore } = await loadWith({
      ioredis: missing('ioredis'),
      redis: missing('redis'),
    });
    await expect(openStore(undefined, Date.now)).resolves.toBeInstanceOf(MemoryStore);
    // The host's own store, opened from a URL with no library: the host learns that from its store, not
    // from the module's boot (the module neither opened nor owns it).
    const own = new RedisStore({ url: sharedRedisUrl() });
    try {
      await expect(openStore(own, Date.now)).resolves.toBe(own);
    } finally {
      await own.close();
    }
  });
});
