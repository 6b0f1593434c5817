/**
 * Attack (atk-221): what becomes of the deaf connection the check replaces. A connection a middlebox (NAT, load
 * balancer, firewall) dropped without a word does not answer anything any more, its FIN included. The check finds
 * it deaf and closes it as it closes any link (QUIT within 0 ms, then the driver's `disconnect()`): ioredis only
 * `end()`s its socket, which then waits for the peer's FIN that never comes. The socket (and its handle) stays
 * open until the kernel gives up on it (minutes: tcp_retries2), one more per check that found one deaf, and
 * store.close() does not end it either: the process does not exit by itself after app.close() (jest reports an
 * open handle and does not exit). Played by a relay in front of the shared Redis that, muted, swallows every
 * byte and the FIN of the subscriber connection (allowHalfOpen: it never closes its side).
 */
import { randomUUID } from 'node:crypto';
import { createServer, Socket, type Server } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

async function blackHoleRelay(): Promise<{
  url: string;
  port: number;
  mute(): number;
  close(): Promise<void>;
}> {
  const target = new URL(sharedRedisUrl());
  const pairs: { client: Socket; redis: Socket; subscribed: boolean; muted: boolean }[] = [];
  const server: Server = createServer({ allowHalfOpen: true }, (client) => {
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
    // The client's FIN: passed on while the path works; swallowed once it is a black hole.
    client.on('end', () => {
      if (!pair.muted) {
        redis.end();
        client.end();
      }
    });
    client.on('error', () => redis.destroy());
    redis.on('error', () => client.destroy());
    redis.on('close', () => {
      if (!pair.muted) client.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    mute: () => {
      const subscribers = pairs.filter((pair) => pair.subscribed && !pair.client.destroyed);
      for (const pair of subscribers) pair.muted = true;
      return subscribers.length;
    },
    close: async () => {
      for (const pair of pairs) {
        pair.client.destroy();
        pair.redis.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** This process's own sockets to the relay (client side), still open. */
function socketsTo(port: number): number {
  const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles();
  return handles.filter((h) => h instanceof Socket && h.remotePort === port && !h.destroyed).length;
}

describe('attack: the deaf subscriber connection the check replaces', () => {
  it.each(['ioredis', 'redis'] as const)(
    'over %s: once replaced (and once the store is closed) no socket of it is left open',
    async (driver) => {
      const keyPrefix = `pv-linger:${randomUUID()}:`;
      const through = await blackHoleRelay();
      const store = new RedisStore({ url: through.url, keyPrefix, subscriberCheckMs: 500, driver });
      const publisher = new RedisStore({ url: sharedRedisUrl(), keyPrefix });
      let gaps = 0;
      try {
        await store.subscribe(
          'status',
          () => undefined,
          () => void gaps++,
        );
        expect(through.mute()).toBe(1);
        await eventually(async () => expect(gaps).toBe(1), 5_000);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        // Replaced: the store's own connection and the subscriber's new one are left (the deaf one is gone).
        expect(socketsTo(through.port)).toBe(2);
        await store.close();
        await publisher.close();
        // Closed, the store leaves nothing open: the deaf connection's socket included.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(socketsTo(through.port)).toBe(0);
      } finally {
        await store.close();
        await publisher.close();
        await through.close();
      }
    },
    30_000,
  );
});
