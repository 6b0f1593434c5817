import { afterEach, describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { freePort } from '../support/redis-server.js';

describe('store: redis-first-group-deadline.attack', () => {
  /**
   * Issue 45, the first group's wait (32f5f3b): until the store's first group of several keys is
   * answered, later groups wait for it. A host's contract is commandTimeoutMs: "each operation rejects
   * when Redis has not answered by then". Redis is down when the host boots (nothing listens yet): each
   * start's group fails at the deadline, and must not wait for the deadlines of the starts before it.
   */
  describe('RedisStore: groups issued while Redis is down at boot', () => {
    const opened: RedisStore[] = [];
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });

    it('eight starts issued one after another each fail within about one deadline of being issued', async () => {
      const port = await freePort();
      const store = new RedisStore({
        url: `redis://127.0.0.1:${port}`,
        commandTimeoutMs: 200,
      });
      opened.push(store);
      await store.ready();
      const took: Promise<number>[] = [];
      for (let n = 0; n < 8; n++) {
        const issued = Date.now();
        // A start's reads and writes of several keys: one group.
        const group = Promise.all([store.get(`a${n}`), store.increment(`b${n}`, 1, 60_000)]);
        took.push(
          group.then(
            () => -1,
            () => Date.now() - issued,
          ),
        );
        // The next start arrives on a later turn of the event loop: a group of its own.
        await new Promise((resolve) => setImmediate(resolve));
      }
      const times = await Promise.all(took);
      expect(times.every((t) => t >= 0)).toBe(true);
      // One deadline each, with room for a loaded machine: not the sum of the deadlines before it (8 x 200 ms).
      expect(Math.max(...times)).toBeLessThan(700);
    });
  });
});
