/**
 * RedisSubscriber over stand-ins of the two drivers' connections, on jest's clock: what the store's listeners
 * (the status stream) hear of a connection that refuses, reconnects, ends for good or is closed, and what is
 * sent to Redis meanwhile. The same behaviours over real Redis and Redis Cluster: test/store/redis-subscriber-*.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { RedisSubscriber, subscriberConnection } from './redis-subscriber.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';
import { after, DRIVERS, listen, Redis, settle } from '../../test/support/redis-link-stand-ins.js';

describe("RedisSubscriber on jest's clock", () => {
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'Date'],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])('RedisSubscriber over %s', (driver) => {
    function subscriber(): { redis: Redis; store: RedisSubscriber } {
      const redis = new Redis();
      const client = DRIVERS[driver](redis);
      return {
        redis,
        store: new RedisSubscriber(
          subscriberConnection(() => Promise.resolve(client)),
          50,
        ),
      };
    }

    it("delivers a channel's messages to each of its listeners, one SUBSCRIBE for the channel; a listener that throws keeps none from the others", async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      await listen(redis, store, 'a', heard);
      await store.subscribe('a', () => {
        throw new Error('a listener fails');
      });
      await store.subscribe('a', (message) => heard.push(`again:${message}`));
      redis.last().send('a', 'one');
      expect(heard).toStrictEqual(['a:one', 'again:one']);
      expect(redis.log).toStrictEqual(['0 SUBSCRIBE a']);
      expect(redis.links).toHaveLength(1);
      await store.close();
    });

    it('unsubscribes a channel with its last listener and closes the connection with the last of all; a message still in flight for a dropped channel reaches no one and breaks nothing', async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      const offA = await listen(redis, store, 'a', heard);
      const offB = await store.subscribe('b', (message) => heard.push(`b:${message}`));
      offA();
      offA();
      await settle();
      expect(redis.log).toStrictEqual(['0 SUBSCRIBE a', '0 SUBSCRIBE b', '0 UNSUBSCRIBE a']);
      expect(() => redis.last().send('a', 'late', false)).not.toThrow();
      redis.last().send('b', 'two');
      expect(heard).toStrictEqual(['b:two']);
      offB();
      await settle();
      expect(redis.log.slice(3)).toStrictEqual(['0 QUIT']);
      // A new listener opens a new connection.
      await listen(redis, store, 'c', heard);
      expect(redis.links).toHaveLength(2);
      await store.close();
    });

    it('a SUBSCRIBE Redis refuses fails its subscribe; the next listener of the channel sends it again', async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      await listen(redis, store, 'a', heard);
      redis.refused.add('b');
      await expect(store.subscribe('b', (message) => heard.push(`refused:${message}`))).rejects.toThrow(
        'NOPERM',
      );
      redis.refused.delete('b');
      await store.subscribe('b', (message) => heard.push(`b:${message}`));
      redis.last().send('b', 'one');
      expect(heard).toStrictEqual(['b:one']);
      expect(redis.log).toStrictEqual(['0 SUBSCRIBE a', '0 SUBSCRIBE b', '0 UNSUBSCRIBE b', '0 SUBSCRIBE b']);
      await store.close();
    });

    it('after a reconnection, tells each listener that asked, once its channels are subscribed again; never on the first subscribe; one that throws keeps none from the others', async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      const gaps: string[] = [];
      const offA = await listen(redis, store, 'a', heard, () => {
        gaps.push('a');
        // What is published as a listener reads again after a gap is heard.
        redis.last().send('a', 'after-gap');
      });
      await store.subscribe(
        'b',
        (message) => heard.push(`b:${message}`),
        () => {
          gaps.push('b');
          throw new Error('a gap listener fails');
        },
      );
      await store.subscribe('b', (message) => heard.push(`quiet:${message}`));
      expect(gaps).toStrictEqual([]);
      redis.last().reconnect();
      await settle();
      expect(gaps.sort()).toStrictEqual(['a', 'b']);
      expect(heard).toStrictEqual(['a:after-gap']);
      offA();
      redis.last().reconnect();
      await settle();
      expect(gaps.sort()).toStrictEqual(['a', 'b', 'b']);
      await store.close();
    });

    it('replaces a connection that ends for good at once, then 1 s, 2 s, 4 s, 8 s and 8 s apart until one is subscribed; its listeners hear again, told of the gap', async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      const gaps: string[] = [];
      await listen(redis, store, 'a', heard, () => gaps.push('gap'));
      redis.last().end();
      await after(0);
      expect(redis.links).toHaveLength(2);
      for (const wait of [1000, 2000, 4000, 8000, 8000]) {
        // This one ends before it is ever ready.
        redis.last().end();
        await settle();
        const links = redis.links.length;
        await after(wait - 1);
        expect(redis.links).toHaveLength(links);
        await after(1);
        expect(redis.links).toHaveLength(links + 1);
      }
      expect(gaps).toStrictEqual([]);
      redis.last().up();
      await settle();
      expect(gaps).toStrictEqual(['gap']);
      redis.last().send('a', 'back');
      expect(heard).toStrictEqual(['a:back']);
      // Subscribed again: the next end is replaced at once.
      redis.last().end();
      await after(0);
      expect(redis.links).toHaveLength(8);
      await store.close();
    });

    it('a replacement that ends right after its SUBSCRIBE is not used: another is opened 1 s later', async () => {
      const { redis, store } = subscriber();
      const heard: string[] = [];
      await listen(redis, store, 'a', heard);
      redis.endsOnSubscribe = 1;
      redis.last().end();
      await after(0);
      redis.last().up();
      await settle();
      expect(redis.log).toContain('1 SUBSCRIBE a');
      expect(redis.links).toHaveLength(2);
      await after(999);
      expect(redis.links).toHaveLength(2);
      await after(1);
      expect(redis.links).toHaveLength(3);
      redis.last().up();
      await settle();
      redis.last().send('a', 'heard');
      expect(heard).toStrictEqual(['a:heard']);
      await store.close();
    });

    it('closed while it waits to open a connection again: nothing is opened, and no timer is left', async () => {
      const { redis, store } = subscriber();
      await listen(redis, store, 'a', []);
      redis.last().end();
      await after(0);
      redis.last().end();
      await settle();
      expect(redis.links).toHaveLength(2);
      await store.close();
      await after(60_000);
      expect(redis.links).toHaveLength(2);
      expect(jest.getTimerCount()).toBe(0);
    });

    it('closed while its first connection waits for Redis: close() ends, and the waiting subscribe fails as the store is unavailable', async () => {
      const { redis, store } = subscriber();
      const subscribing = store.subscribe('a', () => undefined);
      await settle();
      expect(redis.links).toHaveLength(1);
      await store.close();
      await expect(subscribing).rejects.toBeInstanceOf(VerificationStoreUnavailableError);
    });
  });
});

describe('RedisSubscriber on a cluster with no node yet', () => {
  it.each([
    [
      'ioredis',
      {
        status: 'ready',
        call: (): undefined => undefined,
        duplicate: (): undefined => undefined,
        nodes: (): never[] => [],
      },
    ],
    [
      'node-redis',
      {
        sendCommand: (): undefined => undefined,
        duplicate: (): undefined => undefined,
        masters: [],
        slots: [],
        nodeClient: (): undefined => undefined,
      },
    ],
  ])('%s: the subscribe fails as the store is unavailable', async (_driver, cluster) => {
    const store = new RedisSubscriber(
      subscriberConnection(() => Promise.resolve(cluster)),
      50,
    );
    await expect(store.subscribe('a', () => undefined)).rejects.toBeInstanceOf(
      VerificationStoreUnavailableError,
    );
    await store.close();
  });
});
