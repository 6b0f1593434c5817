/**
 * `driver` names the library a RedisStore opens its URL with, when both are installed: the host's
 * choice is the one Redis sees connecting (ioredis checks readiness with INFO on connect; node-redis
 * does not), not the default's.
 */
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: a RedisStore opened from a URL uses the driver named', () => {
  /** The commands Redis has served, by name (its INFO commandstats). */
  const served = async (admin: Redis): Promise<Record<string, number>> =>
    Object.fromEntries(
      [...(await admin.info('commandstats')).matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => [
        m[1]!,
        Number(m[2]),
      ]),
    );

  it.each([
    { driver: 'redis' as const, readyChecks: 0 },
    { driver: 'ioredis' as const, readyChecks: 1 },
    // Both installed and none named: ioredis, the default.
    { driver: undefined, readyChecks: 1 },
  ])('driver: $driver connects with that library', async ({ driver, readyChecks }) => {
    const server = await ThrowawayRedisServer.start();
    const admin = new Redis(server.url, { enableReadyCheck: false });
    try {
      await admin.config('RESETSTAT');
      const store = new RedisStore({ url: server.url, driver });
      try {
        await eventually(() => store.set('probe', '1', 60_000), 10_000);
        const stats = await served(admin);
        // Redis counts a command once it has run: the admin's INFO reading these is not among them.
        expect(stats.info ?? 0).toBe(readyChecks);
      } finally {
        await store.close();
      }
    } finally {
      await admin.quit();
      await server.stop();
    }
  });
});
