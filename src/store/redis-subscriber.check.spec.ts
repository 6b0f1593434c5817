/**
 * The subscriber's check that its connection still hears (RedisStore's `subscriberCheckMs`), over stand-ins of the
 * two drivers' connections on jest's clock: a message of its own, published every period, back within the wait,
 * or the connection is opened again and the listeners told of the gap. Over real Redis: test/store/redis-subscriber-deaf.
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { RedisSubscriber, subscriberCheck, subscriberConnection } from './redis-subscriber.js';
import { VerificationOptionsError } from '../core/option-rules.js';
import { after, DRIVERS, listen, Redis, settle } from '../../test/support/redis-link-stand-ins.js';

describe("RedisSubscriber's check on jest's clock", () => {
  beforeEach(() => {
    jest.useFakeTimers({
      doNotFake: ['setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask', 'Date'],
    });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  describe.each(Object.keys(DRIVERS) as (keyof typeof DRIVERS)[])('over %s', (driver) => {
    /** A subscriber that checks its connection every 30 s (back within 10 s); `the` says what Redis does with it. */
    function checked() {
      const redis = new Redis();
      const the = { deaf: false, failing: false, reply: (message: string) => message };
      const published: number[] = [];
      const store = new RedisSubscriber(
        subscriberConnection(() => Promise.resolve(DRIVERS[driver](redis)), {
          channel: 'check',
          everyMs: 30_000,
          waitMs: 10_000,
          publish: (message) => {
            published.push(Date.now());
            if (the.failing) return Promise.reject(new Error('store down'));
            if (!the.deaf) setImmediate(() => redis.last().send('check', the.reply(message)));
            return Promise.resolve();
          },
        }),
        50,
      );
      return { redis, store, the, published };
    }

    it('checks its connection every 30 s on a channel of its own; one that hears its check is kept, its listeners told of no gap', async () => {
      const { redis, store, published } = checked();
      const gaps: string[] = [];
      await listen(redis, store, 'a', [], () => gaps.push('gap'));
      expect(redis.log).toStrictEqual(['0 SUBSCRIBE check', '0 SUBSCRIBE a']);
      await after(29_999);
      expect(published).toHaveLength(0);
      await after(1);
      expect(published).toHaveLength(1);
      await after(60_000);
      expect(published).toHaveLength(3);
      expect({ links: redis.links.length, gaps }).toStrictEqual({ links: 1, gaps: [] });
      await store.close();
    });

    it('a connection that does not hear its check within 10 s is replaced then, not a tick before: its listeners hear again, told of the gap', async () => {
      const { redis, store, the } = checked();
      const heard: string[] = [];
      const gaps: string[] = [];
      await listen(redis, store, 'a', heard, () => gaps.push('gap'));
      the.deaf = true;
      await after(30_000 + 9_999);
      expect(redis.links).toHaveLength(1);
      await after(1);
      // Ended then, as one its driver gave up on: the next is opened at once (jest's clock runs a timer set
      // while it ticks a millisecond later).
      await after(1);
      expect(redis.links).toHaveLength(2);
      the.deaf = false;
      redis.last().up();
      await settle();
      expect(redis.log.filter((line) => line.startsWith('1 '))).toStrictEqual([
        '1 SUBSCRIBE a',
        '1 SUBSCRIBE check',
      ]);
      expect(gaps).toStrictEqual(['gap']);
      redis.last().send('a', 'back');
      expect(heard).toStrictEqual(['a:back']);
      // The new one hears its checks: kept.
      await after(90_000);
      expect({ links: redis.links.length, gaps }).toStrictEqual({ links: 2, gaps: ['gap'] });
      await store.close();
    });

    it("another message on the check's channel (another store's check) is not its own: the connection is replaced", async () => {
      const { redis, store, the } = checked();
      await listen(redis, store, 'a', []);
      the.reply = () => 'another-check';
      await after(40_001);
      expect(redis.links).toHaveLength(2);
      await store.close();
    });

    it("the store's own connection failing to publish the check is no proof: the subscriber's connection is kept", async () => {
      const { redis, store, the, published } = checked();
      const gaps: string[] = [];
      await listen(redis, store, 'a', [], () => gaps.push('gap'));
      the.failing = true;
      await after(80_000);
      expect(published).toHaveLength(2);
      expect({ links: redis.links.length, gaps }).toStrictEqual({ links: 1, gaps: [] });
      await store.close();
    });

    it('closed while a check waits: nothing is opened, and no timer is left', async () => {
      const { redis, store, the } = checked();
      await listen(redis, store, 'a', []);
      the.deaf = true;
      await after(35_000);
      await store.close();
      await after(60_000);
      expect(redis.links).toHaveLength(1);
      expect(jest.getTimerCount()).toBe(0);
    });
  });

  describe('on a cluster (two nodes of one host), the node found deaf is not drawn again while there is another', () => {
    /** The store's cluster client of each driver: each node's `duplicate()` a stand-in link, its node noted. */
    const clusters = {
      ioredis: (open: (node: number) => () => unknown) => ({
        status: 'ready',
        call: () => Promise.resolve(null),
        duplicate: () => undefined,
        nodes: () =>
          [0, 1].map((i) => ({ options: { host: '10.0.0.5', port: 7000 + i }, duplicate: open(i) })),
      }),
      'node-redis': (open: (node: number) => () => unknown) => ({
        sendCommand: () => Promise.resolve(null),
        duplicate: () => undefined,
        masters: [0, 1].map((i) => ({ host: '10.0.0.5', port: 7000 + i, i })),
        slots: [],
        nodeClient: (master: { i: number }) => ({ options: { socket: {} }, duplicate: open(master.i) }),
      }),
    };

    it.each(Object.keys(clusters) as (keyof typeof clusters)[])('%s', async (driver) => {
      const redis = new Redis();
      const onNode: number[] = [];
      const duplicate = DRIVERS[driver === 'ioredis' ? 'ioredis' : 'node-redis'](redis).duplicate;
      const cluster = clusters[driver]((node) => () => (onNode.push(node), duplicate()));
      // Every draw lands on the first node it may (the deaf one, while it is not avoided).
      const random = jest.spyOn(Math, 'random').mockReturnValue(0);
      const store = new RedisSubscriber(
        subscriberConnection(() => Promise.resolve(cluster), {
          channel: 'check',
          everyMs: 30_000,
          waitMs: 10_000,
          publish: (message) => {
            // Node 0 was removed from the cluster while its process lives: its connection hears nothing.
            if (onNode.at(-1) !== 0) setImmediate(() => redis.last().send('check', message));
            return Promise.resolve();
          },
        }),
        50,
      );
      try {
        const gaps: string[] = [];
        const heard: string[] = [];
        await listen(redis, store, 'a', heard, () => gaps.push('gap'));
        expect(onNode).toStrictEqual([0]);
        await after(40_000);
        await after(1);
        expect(onNode).toStrictEqual([0, 1]);
        redis.last().up();
        await settle();
        redis.last().send('a', 'back');
        expect({ heard, gaps }).toStrictEqual({ heard: ['a:back'], gaps: ['gap'] });
        // On the other node it hears its checks: kept.
        await after(90_000);
        expect(onNode).toStrictEqual([0, 1]);
      } finally {
        random.mockRestore();
        await store.close();
      }
    });
  });
});

describe("RedisStore's subscriberCheckMs", () => {
  const sent: string[] = [];
  const publish = (channel: string, message: string) => {
    sent.push(`${channel} ${message}`);
    return Promise.resolve();
  };

  it('by default every 30 s, back within 10 s, on a channel of its own under the key prefix, published without it', async () => {
    const one = subscriberCheck(undefined, 'pv:', publish)!;
    const another = subscriberCheck(undefined, 'pv:', publish)!;
    expect({ everyMs: one.everyMs, waitMs: one.waitMs }).toStrictEqual({ everyMs: 30_000, waitMs: 10_000 });
    expect(one.channel).toMatch(/^pv:subscriber-check:[0-9a-f-]{36}$/);
    expect(another.channel).not.toBe(one.channel);
    sent.length = 0;
    await one.publish('m');
    expect(sent).toStrictEqual([`${one.channel.slice('pv:'.length)} m`]);
  });

  it('a shorter period is also the wait; 0 checks never', () => {
    expect(subscriberCheck(5_000, 'pv:', publish)).toMatchObject({ everyMs: 5_000, waitMs: 5_000 });
    expect(subscriberCheck(10_001, 'pv:', publish)).toMatchObject({ everyMs: 10_001, waitMs: 10_000 });
    expect(subscriberCheck(0, 'pv:', publish)).toBeUndefined();
  });

  it.each([-1, 1.5, Number.NaN, 2_147_483_648])('%s fails naming the option', (everyMs) => {
    expect(() => subscriberCheck(everyMs, 'pv:', publish)).toThrow(VerificationOptionsError);
    expect(() => subscriberCheck(everyMs, 'pv:', publish)).toThrow(/subscriberCheckMs/);
  });
});
