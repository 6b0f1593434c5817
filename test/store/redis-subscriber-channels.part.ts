/**
 * The store's subscriber connection as Redis sees it (`PUBSUB NUMSUB`, `CLIENT LIST TYPE pubsub`), on either
 * client library: a channel whose last listener left is unsubscribed in Redis while others are listened to,
 * the connection is closed with the last listener and opened again with the next, and an unsubscribe called
 * again (a stream's teardown run twice, or after the store closed) does nothing.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { connectNodeRedis, eventually, ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: the subscriber connection and its channels, as Redis sees them', () => {
  let server: ThrowawayRedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await ThrowawayRedisServer.start();
    admin = new Redis(server.url);
  }, 30_000);

  afterAll(async () => {
    await admin?.quit();
    await server?.stop();
  });

  const numsub = async (...channels: string[]): Promise<number[]> => {
    const reply = (await admin.call('PUBSUB', 'NUMSUB', ...channels)) as (string | number)[];
    return channels.map((_, i) => Number(reply[2 * i + 1]));
  };
  const pubsubConnections = async (): Promise<number> =>
    String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line.trim() !== '').length;

  const hosts = {
    ioredis: async () => {
      const client = new Redis(server.url);
      client.on('error', () => undefined);
      await eventually(async () => expect(client.status).toBe('ready'), 10_000);
      return { client, close: () => client.quit().then(() => undefined) };
    },
    'node-redis': async () => {
      const client = await connectNodeRedis(server.url);
      return { client, close: () => client.close() };
    },
  };

  for (const [driver, host] of Object.entries(hosts)) {
    it(`unsubscribes in Redis a channel its last listener left, and closes the connection with the last channel (${driver})`, async () => {
      const { client, close } = await host();
      const prefix = `pv-sub-channels:${randomUUID()}:`;
      const store = new RedisStore({ client, keyPrefix: prefix });
      try {
        const kept: string[] = [];
        const leavingA = await store.subscribe('a', () => undefined);
        const leavingA2 = await store.subscribe('a', () => undefined);
        const leavingB = await store.subscribe('b', (message) => void kept.push(message));
        expect(await numsub(`${prefix}a`, `${prefix}b`)).toEqual([1, 1]);
        expect(await pubsubConnections()).toBe(1);
        // One of two listeners leaves: the channel stays.
        leavingA();
        leavingA();
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(await numsub(`${prefix}a`, `${prefix}b`)).toEqual([1, 1]);
        // The last leaves (twice, as a teardown run twice): Redis no longer sends it, b is still heard.
        leavingA2();
        leavingA2();
        await eventually(async () => expect(await numsub(`${prefix}a`, `${prefix}b`)).toEqual([0, 1]), 5000);
        await store.publish('b', 'still');
        await eventually(async () => expect(kept).toEqual(['still']), 5000);
        // The last channel left: the connection is closed; the next listener opens one again.
        leavingB();
        leavingB();
        await eventually(async () => expect(await pubsubConnections()).toBe(0), 5000);
        const heard: string[] = [];
        const again = await store.subscribe('a', (message) => void heard.push(message));
        expect(await pubsubConnections()).toBe(1);
        await store.publish('a', 'back');
        await eventually(async () => expect(heard).toEqual(['back']), 5000);
        // Closed with the store; an unsubscribe after that does nothing.
        await store.close();
        expect(await pubsubConnections()).toBe(0);
        expect(() => again()).not.toThrow();
      } finally {
        await store.close();
        await close();
      }
    }, 30_000);
  }
});
