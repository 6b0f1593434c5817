/**
 * Where the store's subscriber connection goes, as Redis reports it (`CLIENT LIST TYPE pubsub`): on a
 * cluster, to one node picked at random, so that many stores (many instances of a host) do not all load the
 * first node; and a client the store cannot copy is refused with the reason.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster, Redis } from 'ioredis';
import { createCluster } from 'redis';
import { PhoneVerificationError } from '../../src/core/phone-verification.error.js';
import { RedisStore } from '../../src/store/redis.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

/** Enough stores that all on one node of three, by chance, is one in 3^11. */
const STORES = 12;

describe('store: the node a subscriber connection goes to on a cluster', () => {
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

  /** The subscriber connections on each node. */
  async function pubsubPerNode(): Promise<number[]> {
    return Promise.all(
      admins.map(async (admin) => {
        const list = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
        return list.split('\n').filter((line) => line.trim() !== '').length;
      }),
    );
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
    it(`spreads the stores' subscriber connections over the nodes, one each, closed with the store (${driver} cluster)`, async () => {
      const { client, close } = await host();
      const stores = Array.from(
        { length: STORES },
        () => new RedisStore({ client, keyPrefix: `pv-sub-nodes:${randomUUID()}:` }),
      );
      try {
        const heard: string[][] = stores.map(() => []);
        await Promise.all(stores.map((store, i) => store.subscribe('status', (m) => void heard[i]!.push(m))));
        const perNode = await pubsubPerNode();
        expect(perNode.reduce((sum, count) => sum + count, 0)).toBe(STORES);
        expect(perNode.filter((count) => count > 0).length).toBeGreaterThan(1);
        // Each hears what is published to it, wherever its connection is.
        await Promise.all(stores.map((store, i) => store.publish('status', `to-${i}`)));
        await eventually(async () => expect(heard).toEqual(stores.map((_, i) => [`to-${i}`])), 5000);
        await Promise.all(stores.map((store) => store.close()));
        await eventually(async () => expect(await pubsubPerNode()).toEqual([0, 0, 0]), 5000);
      } finally {
        await Promise.all(stores.map((store) => store.close()));
        await close();
      }
    }, 40_000);
  }

  it('subscribes on an ioredis cluster made with lazyConnect that nothing used yet, and hears what is published', async () => {
    const client = new Cluster(cluster.seeds, { lazyConnect: true });
    client.on('error', () => undefined);
    const store = new RedisStore({ client, keyPrefix: `pv-sub-lazy:${randomUUID()}:` });
    try {
      const heard: string[] = [];
      await store.subscribe('status', (message) => void heard.push(message));
      expect(await pubsubPerNode().then((perNode) => perNode.reduce((sum, n) => sum + n, 0))).toBe(1);
      await store.publish('status', 'hello');
      await eventually(async () => expect(heard).toEqual(['hello']), 5000);
    } finally {
      await store.close();
      await client.quit();
    }
  }, 40_000);
});

describe('store: a client the subscriber cannot copy', () => {
  it('refuses to subscribe, saying why, and is not taken for Redis being away', async () => {
    const client = new Redis(sharedRedisUrl());
    client.on('error', () => undefined);
    await eventually(async () => expect(client.status).toBe('ready'), 10_000);
    // A wrapper of ioredis without duplicate().
    Object.defineProperty(client, 'duplicate', { value: undefined });
    const store = new RedisStore({ client, keyPrefix: `pv-sub-nodup:${randomUUID()}:` });
    try {
      const refused = await store.subscribe('status', () => undefined).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(PhoneVerificationError);
      expect(refused).not.toBeInstanceOf(VerificationStoreUnavailableError);
      expect((refused as Error).message).toBe(
        'RedisStore: subscribing needs a client with duplicate() (ioredis or node-redis)',
      );
    } finally {
      await store.close();
      await client.quit();
    }
  }, 20_000);
});
