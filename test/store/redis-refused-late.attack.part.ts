import { afterEach, describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { HeldRedisClient, oneNodeClusterMode } from '../support/held-redis.js';

describe('store: redis-refused-late.attack', () => {
  /**
   * Issue 45, the first group on a cluster-mode endpoint behind a plain client (32f5f3b): Redis refuses
   * its call of several slots (CROSSSLOT) and the store sends its operations again a key at a time.
   * When that refusal comes back after the store's deadline, the host was told the writes failed, and
   * the store has sent later writes of the same keys since: nothing of the refused group may be sent then.
   */
  const cleanups: (() => unknown)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  describe('RedisStore: a first group refused (CROSSSLOT) after its deadline', () => {
    it('a set of k reported failed, then a delete of k answered: k stays gone once the refusal arrives', async () => {
      const { client } = await oneNodeClusterMode(cleanups);
      const held = new HeldRedisClient(client);
      const store = new RedisStore({ client: held, commandTimeoutMs: 200 });
      cleanups.push(() => store.close());

      // The first group's answer (CROSSSLOT) is slower than the deadline: the host is told it failed.
      held.holding = true;
      const first = Promise.all([store.set('k', 'first', 60_000), store.set('k1', '1', 60_000)]);
      await expect(first).rejects.toThrow(/no answer within 200 ms/);
      // The host goes on: k deleted, and answered.
      held.holding = false;
      await store.delete('k');
      const sentBefore = held.sent;
      held.release();
      // Let the late refusal reach the store, and anything it sends then reach Redis (one connection: in order).
      await new Promise((resolve) => setImmediate(resolve));
      await client.ping();
      await expect(store.get('k')).resolves.toBeNull();
      // Nothing of the refused group was sent after its deadline.
      expect(held.sent).toBe(sentBefore + 1);
    });
  });
});
