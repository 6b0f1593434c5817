/**
 * A RedisStore opened from a URL reconnects by itself, and however long Redis was away its pause between
 * attempts stays short: once Redis is back, operations work again within about a second, on either client
 * library. Real time: the client libraries' reconnection timers run on no clock a test can move.
 */
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

/** Long enough that a back-off doubling past its bound (or starting at it) waits far longer than a second. */
const OUTAGE_MS = 9_000;

describe('store: a RedisStore opened from a URL, Redis away for a while and back', () => {
  it(
    'works again within 2.5 s of Redis returning, whichever library opened it',
    async () => {
      const server = await ThrowawayRedisServer.start();
      const stores = (['ioredis', 'redis'] as const).map(
        (driver) => [driver, new RedisStore({ url: server.url, driver, commandTimeoutMs: 250 })] as const,
      );
      try {
        for (const [, store] of stores) await eventually(() => store.set('probe', 'before', 60_000), 10_000);
        await server.stop();
        await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
        await server.start();
        const back = Date.now();
        const backAfter = await Promise.all(
          stores.map(async ([driver, store]) => {
            await eventually(() => store.set('probe', driver, 60_000), 20_000);
            return { driver, withinBound: Date.now() - back <= 2_500 };
          }),
        );
        expect(backAfter).toEqual([
          { driver: 'ioredis', withinBound: true },
          { driver: 'redis', withinBound: true },
        ]);
      } finally {
        for (const [, store] of stores) await store.close();
        await server.stop();
      }
    },
    OUTAGE_MS + 30_000,
  );
});
