/**
 * A subscriber connection that stays open but no longer hears (a middlebox that dropped it without a word, a
 * cluster node removed from the cluster while its process lives): the store's own check, a message it publishes
 * to itself, does not come back, so the connection is opened again and the listeners are told of the gap. Played
 * by a TCP relay in front of the shared Redis that stops passing the subscriber connection's bytes, both ways,
 * while its socket stays open. Real time: the check runs on timers, as the client library's connection does.
 */
import { randomUUID } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

/** A relay to the shared Redis; `mute()` stops passing the bytes of every connection that subscribed. */
async function relay(): Promise<{ url: string; mute(): number; close(): Promise<void> }> {
  const target = new URL(sharedRedisUrl());
  const pairs: { client: Socket; redis: Socket; subscribed: boolean; muted: boolean }[] = [];
  const server: Server = createServer((client) => {
    const redis = new Socket();
    const pair = { client, redis, subscribed: false, muted: false };
    pairs.push(pair);
    redis.connect(Number(target.port || 6379), target.hostname);
    client.on('data', (data: Buffer) => {
      if (/SUBSCRIBE/i.test(data.toString('latin1'))) pair.subscribed = true;
      if (!pair.muted) redis.write(data);
    });
    redis.on('data', (data: Buffer) => {
      if (!pair.muted) client.write(data);
    });
    for (const [one, other] of [
      [client, redis],
      [redis, client],
    ] as const) {
      one.on('error', () => other.destroy());
      one.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    mute: () => {
      const subscribers = pairs.filter((pair) => pair.subscribed && !pair.client.destroyed);
      for (const pair of subscribers) pair.muted = true;
      return subscribers.length;
    },
    close: async () => {
      for (const pair of pairs) pair.client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('store: a subscriber connection that no longer hears', () => {
  it.each([
    ['checked every 500 ms', 500],
    ['never checked (subscriberCheckMs: 0)', 0],
  ])(
    '%s',
    async (_shape, subscriberCheckMs) => {
      const keyPrefix = `pv-deaf:${randomUUID()}:`;
      const through = await relay();
      const store = new RedisStore({ url: through.url, keyPrefix, subscriberCheckMs });
      const publisher = new RedisStore({ url: sharedRedisUrl(), keyPrefix });
      const heard: string[] = [];
      let gaps = 0;
      try {
        await store.subscribe(
          'status',
          (message) => heard.push(message),
          () => void gaps++,
        );
        await publisher.publish('status', 'before');
        await eventually(async () => expect(heard).toEqual(['before']), 5_000);
        expect(through.mute()).toBe(1);
        await publisher.publish('status', 'muted');
        if (subscriberCheckMs === 0) {
          // Nothing tells the store: its listeners hear nothing more, and are never told of the gap.
          await new Promise((resolve) => setTimeout(resolve, 2_000));
          expect({ heard, gaps }).toEqual({ heard: ['before'], gaps: 0 });
          return;
        }
        // Its check unanswered (a period and its wait), the connection is opened again and the listener told.
        await eventually(async () => expect(gaps).toBe(1), 5_000);
        await publisher.publish('status', 'after');
        await eventually(async () => expect(heard).toEqual(['before', 'after']), 5_000);
      } finally {
        await store.close();
        await publisher.close();
        await through.close();
      }
    },
    30_000,
  );
});
