/**
 * Attack (the subscriber's close, 846e5b4c): close() no longer hangs on a subscriber connection being opened
 * again; the first one is another matter. Redis is down when a status stream first subscribes: the store's
 * subscribe gives up at its deadline (503 to the stream), but the subscriber's duplicate connection goes on
 * waiting to be ready, retrying by the client's strategy. The host shuts down: store.close() awaits that
 * first opening, which waits for Redis, so close() does not return while Redis is down (the deploy's shutdown
 * hangs), and the duplicate keeps reconnecting behind it.
 *
 * Expected, both drivers: close() returns at once, and leaves no connection of the store's trying.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisStore } from '../../src/store/redis.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

const hosts = {
  ioredis: async (url: string) => {
    const client = new Redis(url, { retryStrategy: () => 100 });
    client.on('error', () => undefined);
    await eventually(async () => expect(client.status).toBe('ready'), 10_000);
    return { client, close: () => client.disconnect() };
  },
  'node-redis': async (url: string) => {
    const client = createClient({ url, socket: { reconnectStrategy: () => 100 } });
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: () => void client.destroy() };
  },
};

describe('store: close while the first subscriber connection waits for Redis', () => {
  for (const [driver, host] of Object.entries(hosts)) {
    it(`returns at once (${driver})`, async () => {
      const server = await ThrowawayRedisServer.start();
      const { client, close } = await host(server.url);
      const store = new RedisStore({ client, keyPrefix: `pv-atk210-close:${randomUUID()}:` });
      try {
        await server.stop();
        await expect(store.subscribe('status', () => undefined)).rejects.toBeInstanceOf(
          VerificationStoreUnavailableError,
        );
        const started = Date.now();
        const closed = await Promise.race([
          store.close().then(() => 'closed'),
          new Promise((resolve) => setTimeout(resolve, 3000, 'still waiting')),
        ]);
        expect({ closed, quick: Date.now() - started < 500 }).toEqual({ closed: 'closed', quick: true });
      } finally {
        close();
        await server.stop();
      }
    }, 20_000);
  }
});
