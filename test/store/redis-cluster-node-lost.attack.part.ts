/**
 * Attack (the cluster subscriber, 8f3536f5): the store subscribes on one node's connection. That node is lost
 * for good (its process gone; its replica promoted by the cluster's failover), the cluster goes on without it.
 * ioredis's node connections have no retry strategy: the subscriber's ends and the store opens one on another
 * node, then calls `onGap`. node-redis's node clients keep the default reconnect strategy: the subscriber's
 * duplicate retries the dead address for ever, never `terminated`, so the store neither opens another nor
 * calls `onGap`, and every message published from then on is lost without a word (status streams stop
 * hearing of their sessions until the host restarts).
 *
 * Expected, both drivers: `onGap` once the subscription is back on a live node, and what is published then
 * arrives.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { Cluster } from 'ioredis';
import { createCluster } from 'redis';
import { RedisStore } from '../../src/store/redis.store.js';
import { clusterNode, ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { eventually } from '../support/redis-server.js';

const run = promisify(execFile);

/** `redis-cli` on a node, its answer's text. */
async function cli(port: number, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(port), ...args])).stdout;
}

const hosts = {
  ioredis: async (cluster: ThrowawayRedisCluster) => {
    const client = new Cluster(cluster.seeds);
    client.on('error', () => undefined);
    await eventually(async () => expect(client.status).toBe('ready'), 10_000);
    return { client, close: () => client.quit().then(() => undefined) };
  },
  'node-redis': async (cluster: ThrowawayRedisCluster) => {
    const client = createCluster({
      rootNodes: cluster.seeds.map(({ host, port }) => ({ url: `redis://${host}:${port}` })),
    });
    client.on('error', () => undefined);
    await client.connect();
    return { client, close: () => client.close() };
  },
};

describe('store: the cluster node the subscriber is on is lost for good', () => {
  for (const [driver, host] of Object.entries(hosts)) {
    it(`moves the subscription to a live node and calls onGap (${driver} cluster)`, async () => {
      const cluster = await ThrowawayRedisCluster.start();
      const dir = mkdtempSync(join(tmpdir(), 'pv-atk210-replica-'));
      const replica = await clusterNode(dir);
      const { client, close } = await host(cluster);
      // Without the check (subscriberCheckMs 0): the link ends by itself, a lost node not retried, instead of being
      // found deaf by the check up to 40 s on.
      const store = new RedisStore({
        client,
        keyPrefix: `pv-atk210-lost:${randomUUID()}:`,
        subscriberCheckMs: 0,
      });
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
        // The node the subscriber is on, given a replica.
        const listed = await Promise.all(
          cluster.nodes.map((n) => cli(n.port, 'CLIENT', 'LIST', 'TYPE', 'pubsub')),
        );
        const lost = cluster.nodes[listed.findIndex((text) => text.trim() !== '')]!;
        const id = (await cli(lost.port, 'CLUSTER', 'MYID')).trim();
        await run('redis-cli', [
          '--cluster',
          'add-node',
          `127.0.0.1:${replica.port}`,
          `127.0.0.1:${lost.port}`,
          '--cluster-slave',
          '--cluster-master-id',
          id,
        ]);
        await eventually(
          async () => expect(await cli(replica.port, 'INFO', 'replication')).toMatch(/master_link_status:up/),
          15_000,
        );
        // It is gone; its replica takes its slots.
        await lost.stop();
        await eventually(
          async () => expect(await cli(replica.port, 'INFO', 'replication')).toMatch(/role:master/),
          30_000,
        );
        // Told the subscription is back, and hears what is published then.
        await eventually(async () => expect(gaps).toBe(1), 30_000);
        await eventually(async () => {
          await store.publish('status', 'after').catch(() => undefined);
          expect(heard).toContain('after');
        }, 10_000);
      } finally {
        await store.close();
        await close().catch(() => undefined);
        await replica.stop();
        await cluster.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }, 120_000);
  }
});
