import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { RedisStore } from '../../src/store/redis.store.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { describeStoreContract, TestClock } from './store-contract.js';

describe('store: redis-cluster', () => {
  /**
   * The store on a real Redis Cluster (three masters, slots split between them): every command and
   * script the store sends must stay on one slot, or the cluster answers CROSSSLOT.
   */
  let cluster: ThrowawayRedisCluster;
  let ioredisCluster: Cluster;
  // Return type left to inference: node-redis cluster types are generic over modules and RESP version.
  let nodeRedisCluster: ReturnType<typeof connectNodeRedisCluster> extends Promise<infer C> ? C : never;

  async function connectNodeRedisCluster(seeds: { host: string; port: number }[]) {
    const client = createCluster({
      rootNodes: seeds.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    });
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  const RUN_PREFIX = `pv-cluster:${randomUUID()}:`;

  beforeAll(async () => {
    cluster = await ThrowawayRedisCluster.start();
    ioredisCluster = new Cluster(cluster.seeds);
    nodeRedisCluster = await connectNodeRedisCluster(cluster.seeds);
  }, 60_000);

  afterAll(async () => {
    await ioredisCluster?.quit();
    await nodeRedisCluster?.close();
    await cluster?.stop();
  });

  describeStoreContract('RedisStore on a Redis Cluster (ioredis Cluster)', {
    sharesState: true,
    create: async (clock, namespace) =>
      new RedisStore({ client: ioredisCluster, clock, keyPrefix: `${RUN_PREFIX}ioredis:${namespace}:` }),
  });

  describeStoreContract('RedisStore on a Redis Cluster (node-redis createCluster)', {
    sharesState: true,
    create: async (clock, namespace) =>
      new RedisStore({ client: nodeRedisCluster, clock, keyPrefix: `${RUN_PREFIX}node-redis:${namespace}:` }),
  });

  describe('RedisStore on a Redis Cluster', () => {
    it('spreads the keys of different sessions over the masters (the contract above ran across slots)', async () => {
      const store = new RedisStore({
        client: ioredisCluster,
        clock: new TestClock().now,
        keyPrefix: RUN_PREFIX,
      });
      const ids = Array.from({ length: 30 }, (_, i) => `req-${i}`);
      for (const id of ids) {
        await store.set(`session:{${id}}`, '{}', 60_000);
        await store.setIfAbsent(`event:{${id}}:verification.verified`, 'done', 60_000);
        await store.increment(`limit:{${id}}`, 1, 60_000);
      }
      // Which master holds each session's keys: all three, so a cross-slot mistake would have failed above.
      const ranges = await ioredisCluster.cluster('SLOTS');
      const owners = new Set<number>();
      for (const id of ids) {
        const slot = Number(await ioredisCluster.cluster('KEYSLOT', `${RUN_PREFIX}session:{${id}}`));
        // One session's keys share its slot (the hash tag), whatever follows the tag.
        expect(
          Number(await ioredisCluster.cluster('KEYSLOT', `${RUN_PREFIX}event:{${id}}:verification.verified`)),
        ).toBe(slot);
        const range = ranges.find(([from, to]) => slot >= from && slot <= to);
        owners.add(range![2][1]);
      }
      expect([...owners].sort()).toEqual(cluster.nodes.map((node) => node.port).sort());
      await store.close();
    });

    it('sends every script as EVAL: each master keeps its own scripts, and one that never ran one would answer NOSCRIPT', async () => {
      const sent: string[] = [];
      const recording = new Proxy(ioredisCluster, {
        get(target, property, receiver) {
          if (property !== 'call') return Reflect.get(target, property, receiver) as unknown;
          return (command: string, ...args: string[]) => {
            sent.push(command.toUpperCase());
            return target.call(command, ...args);
          };
        },
      });
      const store = new RedisStore({ client: recording, clock: new TestClock().now, keyPrefix: RUN_PREFIX });
      for (let round = 0; round < 3; round++)
        await Promise.all(
          Array.from({ length: 12 }, (_, i) => store.setIfAbsent(`script:{${round}-${i}}`, 'v', 60_000)),
        );
      await store.close();
      expect(sent.filter((command) => command === 'EVAL')).toHaveLength(36);
      expect(sent).not.toContain('EVALSHA');
    });
  });
});
