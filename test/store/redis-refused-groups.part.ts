import { afterEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: redis-refused-groups', () => {
  /**
   * A group refused for a reason other than CROSSSLOT (Redis busy with another client's script) fails
   * as the refusal says, and the store keeps sending its groups as groups afterwards: only CROSSSLOT (a
   * cluster-mode endpoint behind a plain client) makes it go a command per key for good.
   */
  describe('RedisStore: a group refused otherwise than CROSSSLOT', () => {
    const cleanups: (() => unknown)[] = [];
    afterEach(async () => {
      for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    });

    /**
     * The commands Redis ran while `act` runs, by name (INFO commandstats: a MONITOR connection of ioredis
     * can take a report for a reply and fail). Commands a script ran count under their own names too.
     */
    async function commandsOf(url: string, act: () => Promise<unknown>): Promise<Record<string, number>> {
      const admin = new Redis(url);
      try {
        await admin.config('RESETSTAT');
        await act();
        const stats = String(await admin.info('commandstats'));
        return Object.fromEntries(
          [...stats.matchAll(/cmdstat_(\w+):calls=(\d+)/g)].map((m) => [m[1]!, Number(m[2])]),
        );
      } finally {
        admin.disconnect();
      }
    }

    it('refused while Redis is busy with a script: the group fails then, and goes as one MGET and one EVAL after', async () => {
      const server = await ThrowawayRedisServer.start();
      cleanups.push(() => server.stop());
      const admin = new Redis(server.url);
      cleanups.push(() => admin.disconnect());
      const store = new RedisStore({ url: server.url, keyPrefix: 'refused:' });
      cleanups.push(() => store.close());
      await Promise.all([
        store.set('a', '1', 60_000),
        store.set('b', '2', 60_000),
        store.set('c', '3', 60_000),
      ]);

      // Another client's script runs for 400 ms; past 10 ms Redis refuses every other command (BUSY).
      await admin.config('SET', 'busy-reply-threshold', '10');
      const blocker = new Redis(server.url);
      cleanups.push(() => blocker.disconnect());
      const busy = blocker.eval(
        "local t = redis.call('TIME') local until_us = t[1] * 1e6 + t[2] + 400000 " +
          "repeat t = redis.call('TIME') until t[1] * 1e6 + t[2] >= until_us return 1",
        0,
      );
      await eventually(async () => {
        await expect(admin.ping()).rejects.toThrow(/^BUSY/);
      }, 2_000);
      const refused = await Promise.allSettled([store.get('a'), store.get('b'), store.get('c')]);
      expect(refused.map((r) => r.status === 'rejected' && String(r.reason))).toEqual(
        Array(3).fill(expect.stringMatching(/BUSY/)),
      );
      await busy;

      const sent = await commandsOf(server.url, async () => {
        await expect(Promise.all([store.get('a'), store.get('b'), store.get('c')])).resolves.toEqual([
          '1',
          '2',
          '3',
        ]);
        await Promise.all([store.set('a', 'p', 60_000), store.set('b', 'q', 60_000)]);
      });
      // One MGET for the reads; the writes one EVAL: the failure sent scripts by their text again.
      expect(sent).toMatchObject({ mget: 1, eval: 1 });
      expect(sent).not.toHaveProperty('evalsha');
      await expect(Promise.all([store.get('a'), store.get('b')])).resolves.toEqual(['p', 'q']);
    });
  });
});
