/**
 * Attack (the subscriber's wait for a ready connection, 8f3536f5): a host's ioredis client made with
 * `lazyConnect: true` (a common way to open it at boot, `await client.connect()`). The store subscribes on
 * `client.duplicate()`, which copies `lazyConnect`: the copy never connects by itself, and the link waits for
 * it to be ready before its first SUBSCRIBE, the command that would have connected it. Every subscribe fails
 * at the store's deadline (VerificationStoreUnavailableError: status streams are refused), though Redis is up.
 *
 * Expected: the store subscribes, and hears what is published.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

describe('store: subscribing on a host ioredis client made with lazyConnect', () => {
  it('subscribes, and hears what is published', async () => {
    const client = new Redis(sharedRedisUrl(), { lazyConnect: true });
    client.on('error', () => undefined);
    await client.connect();
    const store = new RedisStore({ client, keyPrefix: `pv-atk210-lazy:${randomUUID()}:` });
    try {
      const heard: string[] = [];
      await store.subscribe('status', (message) => void heard.push(message));
      await store.publish('status', 'hello');
      await eventually(async () => expect(heard).toEqual(['hello']), 5000);
    } finally {
      await store.close();
      await client.quit();
    }
  }, 20_000);
});
