/**
 * Attack (the subscriber on a lazyConnect ioredis Cluster, b3cb26be): the link connects the cluster only when
 * its status is `wait`. A cluster another user already started connecting (status `connecting`: the store's
 * own first command, or a second store of the host on the same client) knows no node yet, so the subscribe
 * fails with 'the cluster has no node to subscribe on' (its connection pool is filled a few ticks after
 * connect() starts). Two stores of one host on one lazy cluster subscribing at once: the first calls connect(),
 * the second finds `connecting`, reads no node and its subscribe is refused (VerificationStoreUnavailableError).
 * (A host's own first command that started the connect a few ticks earlier did not show it here: the pool was
 * filled by the time the link read it; it is the same window.)
 *
 * Expected: a subscribe on a cluster that is connecting waits for it, as the store's commands do, and hears
 * what is published.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { eventually } from '../support/redis-server.js';

describe('attack: subscribing while a lazyConnect ioredis cluster is connecting', () => {
  let cluster: ThrowawayRedisCluster;

  beforeAll(async () => {
    cluster = await ThrowawayRedisCluster.start();
  }, 60_000);

  afterAll(async () => {
    await cluster?.stop();
  });

  function lazyCluster(): Cluster {
    const client = new Cluster(cluster.seeds, { lazyConnect: true });
    client.on('error', () => undefined);
    return client;
  }

  it('two stores on one lazy cluster subscribe at once: both subscribe and hear what is published', async () => {
    const client = lazyCluster();
    const prefix = `pv-sub-lazy2:${randomUUID()}:`;
    const stores = [
      new RedisStore({ client, keyPrefix: prefix }),
      new RedisStore({ client, keyPrefix: prefix }),
    ];
    try {
      const heard: string[][] = [[], []];
      const subscribed = await Promise.allSettled(
        stores.map((store, i) => store.subscribe('status', (message) => void heard[i]!.push(message))),
      );
      // The reason, if refused, shows in the failure.
      expect(subscribed.map((s) => (s.status === 'rejected' ? String(s.reason) : s.status))).toEqual([
        'fulfilled',
        'fulfilled',
      ]);
      await stores[0]!.publish('status', 'hello');
      await eventually(async () => expect(heard).toEqual([['hello'], ['hello']]), 5000);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      await client.quit();
    }
  }, 40_000);
});
