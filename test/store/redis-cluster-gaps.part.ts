import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { createClient, createCluster } from 'redis';
import { RedisStore } from '../../src/store/redis.store.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: subscription gaps on a cluster, and after a reconnection that gave up', () => {
  /**
   * A status stream re-reads its sessions when `onGap` says the subscription was lost and is back. On a
   * Redis Cluster the subscriber's connection is to one node; when it drops (here: CLIENT KILL on every
   * node, wherever it is), what is published meanwhile is lost, and `onGap` must be called once the
   * subscription is back, as on one Redis (redis.store.part.ts).
   */
  let cluster: ThrowawayRedisCluster;
  let admins: Redis[];

  beforeAll(async () => {
    cluster = await ThrowawayRedisCluster.start();
    admins = cluster.nodes.map((node) => new Redis(node.port, '127.0.0.1'));
  }, 60_000);

  afterAll(async () => {
    await Promise.all((admins ?? []).map((admin) => admin.quit()));
    await cluster?.stop();
  });

  /** Drops every subscriber connection of the cluster (the store's is the only one). */
  async function killSubscribers(): Promise<number> {
    const killed = await Promise.all(admins.map((admin) => admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub')));
    return killed.reduce<number>((sum, count) => sum + Number(count), 0);
  }

  const hosts = {
    ioredis: async () => {
      const client = new Cluster(cluster.seeds);
      client.on('error', () => undefined);
      await eventually(async () => expect(client.status).toBe('ready'), 10_000);
      return { client, close: () => client.quit().then(() => undefined) };
    },
    'node-redis': async () => {
      const client = createCluster({
        rootNodes: cluster.seeds.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
      });
      client.on('error', () => undefined);
      await client.connect();
      return { client, close: () => client.close() };
    },
  };

  for (const [driver, host] of Object.entries(hosts)) {
    it(`tells a listener that asked when its subscription was lost and is back, once per gap (${driver} cluster)`, async () => {
      const { client, close } = await host();
      const store = new RedisStore({ client, keyPrefix: `pv-cluster-gap:${randomUUID()}:` });
      try {
        const heard: string[] = [];
        let gaps = 0;
        let quiet = 0;
        await store.subscribe(
          'status',
          (message) => void heard.push(message),
          () => void gaps++,
        );
        await store.subscribe(
          'other',
          () => undefined,
          () => void quiet++,
        );
        await store.publish('status', 'before');
        await eventually(async () => expect(heard).toEqual(['before']), 5000);
        // Not told on the first subscribe.
        expect([gaps, quiet]).toEqual([0, 0]);
        for (const round of [1, 2]) {
          // The subscriber's connection drops; what is published now may be lost.
          expect(await killSubscribers()).toBe(1);
          await store.publish('status', `meanwhile-${round}`);
          await eventually(async () => expect([gaps, quiet]).toEqual([round, round]), 10_000);
          // Told once it is subscribed again: what is published now arrives.
          await store.publish('status', `after-${round}`);
          await eventually(async () => expect(heard).toContain(`after-${round}`), 5000);
        }
        // Once per gap: nothing more after a while.
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect([gaps, quiet]).toEqual([2, 2]);
      } finally {
        await store.close();
        await close();
      }
    }, 40_000);
  }

  /**
   * A host's client whose reconnect strategy gives up (ioredis `retryStrategy` returning null, node-redis
   * `reconnectStrategy: false`): the store's subscriber, a duplicate of it, never reconnects by itself. The store
   * opens a new one, and calls `onGap` once it is subscribed, as after a reconnection.
   */
  const givingUp = {
    ioredis: async (url: string) => {
      const client = new Redis(url, { retryStrategy: () => null });
      client.on('error', () => undefined);
      await eventually(async () => expect(client.status).toBe('ready'), 10_000);
      return { client, close: () => client.quit().then(() => undefined) };
    },
    'node-redis': async (url: string) => {
      const client = createClient({ url, socket: { reconnectStrategy: false } });
      client.on('error', () => undefined);
      await client.connect();
      return { client, close: () => client.close() };
    },
  };

  for (const [driver, host] of Object.entries(givingUp)) {
    it(`opens its subscriber again when the client's reconnect strategy gives up, and tells the listener once (${driver})`, async () => {
      const server = await ThrowawayRedisServer.start();
      const admin = new Redis(server.url);
      const { client, close } = await host(server.url);
      const store = new RedisStore({ client, keyPrefix: `pv-gave-up:${randomUUID()}:` });
      try {
        const heard: string[] = [];
        let gaps = 0;
        await store.subscribe(
          'status',
          (message) => void heard.push(message),
          () => void gaps++,
        );
        await store.publish('status', 'before');
        await eventually(async () => expect(heard).toEqual(['before']), 5000);
        expect(gaps).toBe(0);
        for (const round of [1, 2]) {
          expect(Number(await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub'))).toBe(1);
          await eventually(async () => expect(gaps).toBe(round), 10_000);
          await store.publish('status', `after-${round}`);
          await eventually(async () => expect(heard).toContain(`after-${round}`), 5000);
        }
        await new Promise((resolve) => setTimeout(resolve, 500));
        expect(gaps).toBe(2);
      } finally {
        await store.close();
        await close();
        await admin.quit();
        await server.stop();
      }
    }, 40_000);
  }

  it('closes at once while it waits to open its subscriber again (Redis gone, the client gives up)', async () => {
    const server = await ThrowawayRedisServer.start();
    // Its server is gone: the host's client is disconnected, not quit.
    const { client } = await givingUp.ioredis(server.url);
    const store = new RedisStore({ client, keyPrefix: `pv-gave-up:${randomUUID()}:` });
    try {
      let gaps = 0;
      await store.subscribe(
        'status',
        () => undefined,
        () => void gaps++,
      );
      await server.stop();
      // The subscriber ended; opening it again failed at once, and the next try waits 1 s, then 2 s.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const started = Date.now();
      await store.close();
      expect(Date.now() - started).toBeLessThan(500);
      expect(gaps).toBe(0);
    } finally {
      await store.close();
      client.disconnect();
    }
  }, 20_000);

  it('closes at once while the subscriber it opened again waits for Redis (its strategy retries)', async () => {
    const server = await ThrowawayRedisServer.start();
    // The host's connection and the store's subscriber give up when Redis goes (a call each); the
    // subscriber opened again then retries every 100 ms.
    let calls = 0;
    const client = new Redis(server.url, { retryStrategy: () => (++calls <= 2 ? null : 100) });
    client.on('error', () => undefined);
    await eventually(async () => expect(client.status).toBe('ready'), 10_000);
    const store = new RedisStore({ client, keyPrefix: `pv-gave-up:${randomUUID()}:` });
    try {
      await store.subscribe('status', () => undefined);
      await server.stop();
      await eventually(async () => expect(calls).toBeGreaterThan(3), 5000);
      const started = Date.now();
      await store.close();
      expect(Date.now() - started).toBeLessThan(500);
    } finally {
      await store.close();
      client.disconnect();
    }
  }, 20_000);
});
