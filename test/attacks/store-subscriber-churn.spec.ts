/**
 * Attack (U3) on RedisStore's subscriber: a channel left and joined again, many times, while its
 * UNSUBSCRIBEs are under way; the last channel left (the subscriber connection closing) and a channel
 * joined right after; joins of one channel racing each other. Under both clients the package supports
 * (ioredis and node-redis, each the host's own client), a listener subscribed last hears what is published
 * after its subscription answered: the subscriber never goes deaf.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { connectNodeRedis, sharedRedisUrl } from '../support/redis-server.js';

const PREFIX = `subscriber-churn:${randomUUID()}:`;

/** Messages of one subscription, and a wait (real time: pub/sub has no clock) for `count` of them. */
async function inbox(store: RedisStore, channel: string) {
  const received: string[] = [];
  const unsubscribe = await store.subscribe(channel, (message) => void received.push(message));
  const next = async (count: number): Promise<string[]> => {
    const deadline = Date.now() + 3000;
    while (received.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return [...received];
  };
  return { received, unsubscribe, next };
}

describe('RedisStore subscriber churn', () => {
  let ioredis: Redis;
  let nodeRedis: Awaited<ReturnType<typeof connectNodeRedis>>;
  const stores: RedisStore[] = [];
  beforeAll(async () => {
    ioredis = new Redis(sharedRedisUrl());
    nodeRedis = await connectNodeRedis(sharedRedisUrl());
  });
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });
  afterAll(async () => {
    await ioredis.quit();
    await nodeRedis.close();
  });

  describe.each([
    ['ioredis', () => ioredis],
    ['node-redis', () => nodeRedis],
  ] as const)('on a host %s client', (_driver, client) => {
    const open = (keyPrefix = `${PREFIX}${randomUUID()}:`): RedisStore => {
      const store = new RedisStore({ client: client(), keyPrefix });
      stores.push(store);
      return store;
    };

    it('a channel left and joined again ten times in a row, each leave not awaited: the last join hears, the others do not', async () => {
      const store = open();
      const other = await inbox(store, 'other');
      const joins = [];
      for (let i = 0; i < 10; i += 1) {
        const joined = await inbox(store, 'status');
        joins.push(joined);
        if (i < 9) joined.unsubscribe();
      }
      await store.publish('status', 'after');
      await store.publish('other', 'still');
      expect(await other.next(1)).toEqual(['still']);
      expect(await joins[9]!.next(1)).toEqual(['after']);
      expect(joins.slice(0, 9).flatMap((j) => j.received)).toEqual([]);
    });

    it('a leave and a join of the same channel issued together (the join not awaited first): the join hears', async () => {
      const store = open();
      const other = await inbox(store, 'other');
      const leaving = await inbox(store, 'status');
      leaving.unsubscribe();
      const [first, second] = await Promise.all([inbox(store, 'status'), inbox(store, 'status')]);
      first.unsubscribe();
      await store.publish('status', 'after');
      expect(await second.next(1)).toEqual(['after']);
      expect(first.received).toEqual([]);
      expect(leaving.received).toEqual([]);
      other.unsubscribe();
    });

    it('the last channel left (its connection closing) and joined again at once, twice: the last join hears', async () => {
      const store = open();
      const first = await inbox(store, 'status');
      first.unsubscribe();
      const second = await inbox(store, 'status');
      second.unsubscribe();
      const third = await inbox(store, 'status');
      await store.publish('status', 'after');
      expect(await third.next(1)).toEqual(['after']);
      expect([...first.received, ...second.received]).toEqual([]);
    });

    it('two instances on one Redis: one leaves and rejoins while the other publishes, the rejoined hears the next message', async () => {
      // Two stores of one deployment share a prefix.
      const shared = `${PREFIX}shared:${randomUUID()}:`;
      const [one, two] = [open(shared), open(shared)];
      const held = await inbox(one, 'other');
      for (let i = 0; i < 5; i += 1) {
        const leaving = await inbox(one, 'status');
        await two.publish('status', `m${i}`);
        expect(await leaving.next(1)).toEqual([`m${i}`]);
        leaving.unsubscribe();
      }
      const last = await inbox(one, 'status');
      await two.publish('status', 'last');
      expect(await last.next(1)).toEqual(['last']);
      held.unsubscribe();
    });
  });
});
