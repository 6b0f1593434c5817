/**
 * The subscriber connection opened again when the one in use ends for good (the host's ioredis client gives
 * up: `retryStrategy` returns null, and so does the store's copy of it): at once, then 1 s doubling to 8 s
 * while Redis is away, at once again after it came back; none once the store is closed. Where Redis was, a
 * plain TCP listener counts the connections the store opens (each try is one: its copy gives up after one).
 * Real time: the client library's connection runs on no clock a test can move.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

/** Listens where Redis was, noting when each connection arrives and closing it at once. */
async function countConnections(port: number): Promise<{ arrivals: number[]; stop: () => Promise<void> }> {
  const arrivals: number[] = [];
  const server: Server = createServer((socket) => {
    arrivals.push(Date.now());
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  return {
    arrivals,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function givingUpStore(server: ThrowawayRedisServer) {
  const client = new Redis(server.url, { retryStrategy: () => null });
  client.on('error', () => undefined);
  await eventually(async () => expect(client.status).toBe('ready'), 10_000);
  const store = new RedisStore({ client, keyPrefix: `pv-reopen:${randomUUID()}:` });
  let gaps = 0;
  await store.subscribe(
    'status',
    () => undefined,
    () => void gaps++,
  );
  return { client, store, gaps: () => gaps };
}

const within = (ms: number, target: number, slack = 400): boolean => Math.abs(ms - target) <= slack;

describe('store: the subscriber connection opened again after it ended for good', () => {
  it('tries again 1 s, then 2 s, then 4 s apart while Redis is away, and at once after it was back', async () => {
    const server = await ThrowawayRedisServer.start();
    const { client, store, gaps } = await givingUpStore(server);
    let listener: Awaited<ReturnType<typeof countConnections>> | undefined;
    let admin: Redis | undefined;
    try {
      await server.stop();
      listener = await countConnections(server.port);
      const { arrivals } = listener;
      // The try at once may come before the listener is up: the tries 1 s, 2 s and 4 s after the one before.
      await eventually(async () => expect(arrivals.length).toBeGreaterThanOrEqual(3), 15_000);
      const apart = arrivals.slice(1).map((at, i) => at - arrivals[i]!);
      const doubling =
        (within(apart[0]!, 1000) && within(apart[1]!, 2000)) ||
        (within(apart[0]!, 2000) && within(apart[1]!, 4000));
      expect({ apart, doubling }).toEqual({ apart, doubling: true });
      await listener.stop();
      listener = undefined;
      await server.start();
      const up = new Redis(server.url);
      admin = up;
      // Back with the next try (at most 8 s later), and the listener told.
      await eventually(async () => expect(gaps()).toBe(1), 15_000);
      // Dropped again with Redis up: opened again at once, not after the last delay.
      const dropped = Date.now();
      await eventually(
        async () => expect(Number(await up.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBe(1),
        5000,
      );
      await eventually(async () => expect(gaps()).toBe(2), 5000);
      expect(Date.now() - dropped).toBeLessThan(4000);
    } finally {
      await listener?.stop();
      await store.close();
      client.disconnect();
      admin?.disconnect();
      await server.stop();
    }
  }, 60_000);

  it('tries no more once the store is closed while it waits to try again', async () => {
    const server = await ThrowawayRedisServer.start();
    const { client, store, gaps } = await givingUpStore(server);
    const listener = await (async () => {
      await server.stop();
      return countConnections(server.port);
    })();
    try {
      // A try arrived; the next is 1 s or more away.
      await eventually(async () => expect(listener.arrivals.length).toBeGreaterThanOrEqual(1), 10_000);
      const seen = listener.arrivals.length;
      await store.close();
      await new Promise((resolve) => setTimeout(resolve, 2500));
      expect({ tries: listener.arrivals.length - seen, gaps: gaps() }).toEqual({ tries: 0, gaps: 0 });
    } finally {
      await listener.stop();
      await store.close();
      client.disconnect();
      await server.stop();
    }
  }, 30_000);
});
