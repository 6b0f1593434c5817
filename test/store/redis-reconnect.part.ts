/**
 * A RedisStore opened from a URL reconnects by itself: soon after a drop, and however long Redis stays away
 * its pause between attempts stays at most a second, so that operations work again within about a second of
 * Redis returning, on either client library. Real time: the client libraries' reconnection timers run on no
 * clock a test can move. Redis away is a proxy closing every connection at once (each attempt recorded).
 */
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { RedisProxy } from '../support/redis-proxy.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

/**
 * Attempts to watch: enough that each library's back-off (ioredis from 100 ms, node-redis from 50 ms, doubling)
 * has passed a second, where a pause not held to it (node-redis's own strategy: 1.6 s, then 2 s) shows.
 */
const ATTEMPTS = { ioredis: 6, redis: 7 } as const;

describe('store: a RedisStore opened from a URL, Redis away for a while and back', () => {
  it('tries again within 0.5 s, then at least once a second, and works again once Redis is back, whichever library', async () => {
    const opened = await Promise.all(
      (['ioredis', 'redis'] as const).map(async (driver) => {
        const proxy = await RedisProxy.start(sharedRedisUrl());
        proxy.refusing = true;
        const store = new RedisStore({
          url: proxy.url,
          driver,
          commandTimeoutMs: 250,
          keyPrefix: `pv:reconnect:${process.pid}:`,
        });
        return { driver, proxy, store };
      }),
    );
    try {
      const outcomes = await Promise.all(
        opened.map(async ({ driver, proxy, store }) => {
          await eventually(async () => {
            if (proxy.arrivals.length < ATTEMPTS[driver]) throw new Error('still backing off');
          }, 8_000);
          const pauses = proxy.arrivals.slice(1).map((at, i) => at - proxy.arrivals[i]!);
          proxy.refusing = false;
          const back = Date.now();
          await eventually(() => store.set('probe', driver, 60_000), 5_000);
          return {
            driver,
            firstPauseShort: pauses[0]! <= 500,
            // A second, and room for a loaded machine's late timers.
            longestPause: Math.max(...pauses) <= 1_400 ? 'at most 1.4 s' : pauses,
            backWithin: Date.now() - back <= 2_500,
          };
        }),
      );
      expect(outcomes).toEqual(
        ['ioredis', 'redis'].map((driver) => ({
          driver,
          firstPauseShort: true,
          longestPause: 'at most 1.4 s',
          backWithin: true,
        })),
      );
    } finally {
      for (const { store, proxy } of opened) {
        await store.close();
        await proxy.stop();
      }
    }
  }, 20_000);
});
