/**
 * Attack (atk-221): the subscriber's check racing the driver's own reconnection. Redis restarts or fails over
 * (or the connection is reset) right when the check publishes: the check's message is published while the
 * subscriber connection is away, so it is lost. The driver reconnects by itself a second later, subscribes again
 * and says so (`back`): the listeners are told of the gap, and the connection hears again. The check, still
 * waiting for a message that was lost before the driver came back, then declares the (healthy) connection deaf:
 * it is closed, another opened, and the listeners told of a second gap for the same outage. Every status stream
 * re-reads its session twice right after a Redis restart (a doubled burst of reads on every instance at the
 * moment Redis is least able to take it), and a healthy connection is torn down for nothing.
 * On jest's clock over the drivers' stand-ins (as src/store/redis-subscriber.check.spec.ts).
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { RedisSubscriber, subscriberConnection } from '../../src/store/redis-subscriber.js';
import { after, DRIVERS, listen, Redis } from '../support/redis-link-stand-ins.js';

describe('attack: the subscriber check racing a driver reconnection', () => {
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'Date'],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  it.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])(
    'over %s: one outage the driver recovered from is one gap, and the recovered connection is kept',
    async (driver) => {
      const redis = new Redis();
      const the = { away: false };
      const store = new RedisSubscriber(
        subscriberConnection(() => Promise.resolve(DRIVERS[driver](redis)), {
          channel: 'check',
          everyMs: 30_000,
          waitMs: 10_000,
          publish: (message) => {
            // Published while the subscriber connection is away: Redis delivers it to nobody.
            if (!the.away) setImmediate(() => redis.last().send('check', message));
            return Promise.resolve();
          },
        }),
        50,
      );
      const heard: string[] = [];
      const gaps: number[] = [];
      await listen(redis, store, 'a', heard, () => gaps.push(Date.now()));
      try {
        await after(29_500);
        the.away = true; // the connection drops 0.5 s before the check
        await after(500); // the check publishes: lost
        await after(1_000);
        the.away = false;
        redis.last().reconnect(); // the driver is back 1 s later, subscribed again: the listeners are told
        await after(0);
        expect(gaps).toHaveLength(1);
        redis.last().send('a', 'after-outage');
        expect(heard).toStrictEqual(['a:after-outage']);
        // The check's wait ends 9 s later.
        await after(9_001);
        if (redis.last().ready === false) redis.last().up();
        await after(0);
        expect({ links: redis.links.length, gaps: gaps.length }).toStrictEqual({ links: 1, gaps: 1 });
      } finally {
        await store.close();
      }
    },
  );
});
