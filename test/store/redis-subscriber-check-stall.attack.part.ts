/**
 * Attack (atk-221): the check's verdict when the check's message is back in time but the process was busy. The
 * message comes back on the subscriber's socket well within the wait; the event loop is then blocked (a long
 * synchronous task, a GC pause) past the wait's end. When it runs again, Node runs due timers before it reads the
 * sockets: the wait's timer fires first and declares the connection deaf, and the message, read a moment later,
 * is dropped. A healthy connection is torn down and every listener is told of a gap (each status stream re-reads
 * its session) for a stall of the process, not of the connection. The longer the period the rarer, but the wait is
 * min(10 s, period): a host that sets subscriberCheckMs to 1 s (to notice a deaf connection sooner) reopens its
 * subscriber on every 1 s stall. Real time, real Redis: the check runs on real timers.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { sharedRedisUrl } from '../support/redis-server.js';

describe('attack: the check and a process stall', () => {
  it.each(['ioredis', 'redis'] as const)(
    'over %s: a check whose message came back in time is not failed by a stall of the event loop',
    async (driver) => {
      const keyPrefix = `pv-stall:${randomUUID()}:`;
      const store = new RedisStore({ url: sharedRedisUrl(), keyPrefix, subscriberCheckMs: 1_000, driver });
      const publish = store.publish.bind(store);
      let stalls = 1;
      let checks = 0;
      // The check publishes through the store's own `publish`: the first one is followed by a 1.2 s stall.
      store.publish = async (channel: string, message: string) => {
        const sent = publish(channel, message);
        if (!channel.startsWith('subscriber-check:')) return sent;
        checks++;
        // Sent (the drivers write within this turn of the event loop); its answer and the message itself are on
        // their way back, about a millisecond away, when the process stalls for 1.2 s.
        if (driver === 'redis') await new Promise((resolve) => setImmediate(resolve));
        else for (let i = 0; i < 50; i++) await null;
        if (stalls-- > 0) {
          const end = Date.now() + 1_200;
          while (Date.now() < end);
        }
        return sent;
      };
      let gaps = 0;
      try {
        await store.subscribe(
          'status',
          () => undefined,
          () => void gaps++,
        );
        await new Promise((resolve) => setTimeout(resolve, 3_500));
        expect(checks).toBeGreaterThanOrEqual(1);
        expect(gaps).toBe(0);
      } finally {
        await store.close();
      }
    },
    20_000,
  );
});
