import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { resolveVerificationOptions } from '../../src/options/verification-options.resolver.js';
import { RedisStore } from '../../src/store/redis.store.js';
import {
  STATUS_READS_PER_CALLER,
  STATUS_REFRESHES_PER_NETWORK,
  StatusReadMeter,
} from '../../src/protection/status-read-meter.js';
import { sharedRedisUrl } from '../support/redis-server.js';

describe('status reads metered on Redis when the clock steps back', () => {
  /**
   * Attack on c6884ba (StatusReadMeter remembers a meter it found spent until its window's end, "so it
   * never refuses what the store would grant"): the memo's end is a time on the host's clock, the store's
   * counter on Redis ends after its real PX (3 s). A host clock stepped back (NTP correction, a VM resumed)
   * keeps the memo refusing for the step's length: the caller (or, for a network memo, a whole /24) gets
   * no upstream refresh for minutes while the store would grant it. Before c6884ba the store decided.
   * The test stands for Redis's real expiry of the counter (3 s of real time, the PX the store wrote) by
   * expiring the run's keys with PEXPIRE 1 and waiting for them to go (no test sleeps through 3 s).
   * Expected: once the store grants a read (another instance's meter is granted), this instance grants it.
   * Severity: low–medium (a clock step back turns a 3 s refusal into one as long as the step; status
   * pages of the caller/network are answered as stored meanwhile).
   */
  const prefix = `pv-attack-u:${randomUUID()}:`;
  let client: Redis;
  let admin: Redis;
  beforeAll(() => {
    client = new Redis(sharedRedisUrl());
    admin = new Redis(sharedRedisUrl());
  });
  afterAll(async () => {
    await client.quit();
    await admin.quit();
  });

  function options(now: { t: number }) {
    return resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now.t,
    });
  }

  describe('StatusReadMeter on RedisStore when the host clock steps back', () => {
    it('grants a refresh the store grants once the counter Redis held is gone', async () => {
      const now = { t: 1_800_000_000_000 };
      const store = new RedisStore({ client, clock: () => now.t, keyPrefix: prefix });
      const from = { request: { headers: {} }, ip: '203.0.113.7' };
      const meter = new StatusReadMeter(store, options(now));
      try {
        // Up to the first of its meters to refuse (the caller's or its network's), within one window.
        const granted = Math.min(STATUS_READS_PER_CALLER.refreshes, STATUS_REFRESHES_PER_NETWORK.refreshes);
        for (let i = 0; i < granted; i++) expect(await meter.take(undefined, from, 'refresh')).toBe(true);
        expect(await meter.take(undefined, from, 'refresh')).toBe(false);
        // The host clock steps back ten minutes; Redis drops the counters after their real PX.
        now.t -= 10 * 60_000;
        const keys = await admin.keys(`${prefix}*`);
        expect(keys.length).toBeGreaterThan(0);
        for (const key of keys) await admin.pexpire(key, 1);
        while ((await admin.exists(...keys)) > 0) await new Promise((resolve) => setImmediate(resolve));
        // The store grants: an instance that remembers nothing is granted the caller's refresh.
        const other = new StatusReadMeter(store, options(now));
        expect(await other.take(undefined, from, 'refresh')).toBe(true);
        expect(await meter.take(undefined, from, 'refresh')).toBe(true);
        expect(meter.spent(undefined, from, 'refresh')).toBe(false);
      } finally {
        await store.close();
      }
    });

    it("writes no counter that outlives its window: a network's second lives to the end of the next, which weighs it", async () => {
      // Mid-second: the second's count ends before the windows do.
      const now = { t: 1_800_000_000_250 };
      const keyPrefix = `${prefix}ttl:`;
      const store = new RedisStore({ client, clock: () => now.t, keyPrefix });
      const meter = new StatusReadMeter(store, options(now));
      try {
        // Past the caller's refreshes and its network's second: every counter written, refused ones too.
        for (let i = 0; i <= STATUS_REFRESHES_PER_NETWORK.perSecond; i++)
          await meter.take(
            undefined,
            { request: { headers: {} }, ip: `203.0.113.${i % 2 ? 7 : 8}` },
            'refresh',
          );
        const keys = await admin.keys(`${keyPrefix}*`);
        const ttls = await Promise.all(keys.map((key) => admin.pttl(key)));
        // The caller's meters and the network's window: 3 s; its second: the 750 ms left of it and the next.
        expect(ttls.length).toBeGreaterThanOrEqual(4);
        for (const ttl of ttls) expect(ttl).toBeGreaterThan(0);
        for (const ttl of ttls) expect(ttl).toBeLessThanOrEqual(STATUS_REFRESHES_PER_NETWORK.windowMs);
        expect(Math.min(...ttls)).toBeLessThanOrEqual(1_750);
      } finally {
        await store.close();
      }
    });
  });
});
