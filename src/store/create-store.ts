import { VerificationOptionsError } from '../core/option-rules.js';
import { MemoryStore } from './memory.store.js';
import { RedisDriverMissingError } from './open-redis-client.js';
import { isRedisClient } from './redis-command-runner.js';
import { RedisStore } from './redis.store.js';
import type { VerificationStore } from './verification-store.interface.js';

/** Every method of VerificationStore: what makes a value a store instance. */
export const STORE_METHODS = [
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

/** True for a ready-made store (the host's own instance), as opposed to a description of one. */
export function isVerificationStore(value: unknown): value is VerificationStore {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Record<string, unknown>;
  return STORE_METHODS.every((method) => typeof candidate[method] === 'function');
}

/** The `store` option: a store instance, or how to reach Redis. */
export type StoreOption =
  VerificationStore | { redis: unknown; keyPrefix?: string } | { url: string; keyPrefix?: string };

/**
 * Turns the module's `store` option into a store. A store instance is used as given (its clock is
 * the module's clock, and the host closes it); from anything else the module creates a store on
 * the module's clock (the `clock` option) and must close it on shutdown:
 * `!isVerificationStore(option)` tells which.
 */
export function createStore(option: StoreOption | undefined, clock: () => number): VerificationStore {
  if (option === undefined) return new MemoryStore({ clock });
  if (isVerificationStore(option)) return option;
  if (typeof option === 'object' && option !== null) {
    const keyPrefix = (option as { keyPrefix?: unknown }).keyPrefix;
    if (keyPrefix !== undefined && typeof keyPrefix !== 'string') {
      throw new VerificationOptionsError('store.keyPrefix', 'must be a string');
    }
    if ('redis' in option) {
      if (!isRedisClient(option.redis)) {
        throw new VerificationOptionsError(
          'store.redis',
          'must be an ioredis client (Redis or Cluster) or a node-redis client',
        );
      }
      return new RedisStore({ client: option.redis, keyPrefix, clock });
    }
    if ('url' in option) {
      if (typeof option.url !== 'string' || !/^rediss?:\/\//i.test(option.url)) {
        throw new VerificationOptionsError('store.url', 'must be a redis:// or rediss:// URL');
      }
      return new RedisStore({ url: option.url, keyPrefix, clock });
    }
  }
  throw new VerificationOptionsError(
    'store',
    'must be a VerificationStore instance, { redis: client, keyPrefix? } or { url, keyPrefix? }',
  );
}

/**
 * `createStore`, then, for a store the module opens from a URL, waits until its client library is loaded
 * (not for Redis itself): ioredis and redis are optional peers, and a host that has neither must learn it at
 * boot, not from a 503 on every start.
 */
export async function openStore(
  option: StoreOption | undefined,
  clock: () => number,
): Promise<VerificationStore> {
  const store = createStore(option, clock);
  if (store instanceof RedisStore && !isVerificationStore(option)) {
    try {
      await store.ready();
    } catch (error) {
      if (!(error instanceof RedisDriverMissingError)) throw error;
      throw new VerificationOptionsError(
        'store.url',
        `needs a Redis client library: run \`npm i ioredis\` (or \`npm i redis\`)`,
      );
    }
  }
  return store;
}
