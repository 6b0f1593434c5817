/**
 * Attack (atk-221): on an ioredis Cluster, a node removed from the cluster while its process lives (here a replica:
 * `CLUSTER FORGET` on the others, `CLUSTER RESET` on it; no slot moves, so no MOVED ever tells the client). The
 * check finds the subscriber connection on it deaf and opens another "on a random node" of `cluster.nodes('all')`:
 * the client's own view, which ioredis 6 (no `slotsRefreshInterval` by default) does not refresh without a MOVED
 * or an error, so the removed node is still one of the candidates. Each reopen has a 1/N chance of landing on the
 * same deaf node (another full period and wait of lost messages, `onGap` called for a gap that is not over), with
 * no bound. Math.random is steered here to that 1-in-N draw, so the outcome is deterministic; the code never
 * excludes the node it just found deaf, nor asks the cluster (CLUSTER NODES / SLOTS) which nodes are still members.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it, jest } from '@jest/globals';
import { Cluster } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { clusterNode, ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { eventually } from '../support/redis-server.js';

const run = promisify(execFile);
const cli = async (port: number, ...args: string[]) =>
  (await run('redis-cli', ['-p', String(port), ...args])).stdout;

describe('attack: the check on an ioredis cluster, a node removed while its process lives', () => {
  it('once found deaf, the subscriber is not opened again on the removed node', async () => {
    const cluster = await ThrowawayRedisCluster.start();
    const dir = mkdtempSync(join(tmpdir(), 'pv-atk221-removed-'));
    const removed = await clusterNode(dir);
    let client: Cluster | undefined;
    let other: Cluster | undefined;
    let store: RedisStore | undefined;
    let publisher: RedisStore | undefined;
    const random = jest.spyOn(Math, 'random');
    try {
      const master = cluster.nodes[0]!;
      const masterId = (await cli(master.port, 'CLUSTER', 'MYID')).trim();
      await run('redis-cli', [
        '--cluster',
        'add-node',
        `127.0.0.1:${removed.port}`,
        `127.0.0.1:${master.port}`,
        '--cluster-slave',
        '--cluster-master-id',
        masterId,
      ]);
      await eventually(
        async () => expect(await cli(removed.port, 'INFO', 'replication')).toMatch(/master_link_status:up/),
        20_000,
      );
      client = new Cluster(cluster.seeds);
      client.on('error', () => undefined);
      await eventually(async () => expect(client!.status).toBe('ready'), 10_000);
      await eventually(async () => expect(client!.nodes('all')).toHaveLength(4), 10_000);
      const isRemoved = (node: unknown) =>
        (node as { options: { port: number } }).options.port === removed.port;
      // The subscriber's draw lands on the replica (as 1 in 4 draws do).
      random.mockImplementation(() => {
        const nodes = client!.nodes('all');
        const i = nodes.findIndex(isRemoved);
        return i < 0 ? 0 : (i + 0.5) / nodes.length;
      });
      const keyPrefix = `pv-atk221-removed:${randomUUID()}:`;
      store = new RedisStore({ client, keyPrefix, subscriberCheckMs: 1_000 });
      const heard: string[] = [];
      let gaps = 0;
      await store.subscribe(
        'status',
        (m) => void heard.push(m),
        () => void gaps++,
      );
      expect((await cli(removed.port, 'CLIENT', 'LIST', 'TYPE', 'pubsub')).trim()).not.toBe('');
      // Another instance publishes on its own client.
      other = new Cluster(cluster.seeds);
      other.on('error', () => undefined);
      publisher = new RedisStore({ client: other, keyPrefix, subscriberCheckMs: 0 });
      await eventually(async () => {
        await publisher!.publish('status', 'before');
        expect(heard).toContain('before');
      }, 10_000);
      // Removed from the cluster; its process lives on.
      const removedId = (await cli(removed.port, 'CLUSTER', 'MYID')).trim();
      await Promise.all(cluster.nodes.map((n) => cli(n.port, 'CLUSTER', 'FORGET', removedId)));
      await cli(removed.port, 'CLUSTER', 'RESET', 'SOFT');
      // Found deaf within a period and its wait, the subscriber is opened again, told of the gap, and hears.
      await eventually(async () => expect(gaps).toBeGreaterThanOrEqual(1), 10_000);
      await eventually(async () => {
        await publisher!.publish('status', 'after');
        expect(heard).toContain('after');
      }, 8_000);
    } finally {
      random.mockRestore();
      await store?.close();
      await publisher?.close();
      await client?.quit().catch(() => undefined);
      await other?.quit().catch(() => undefined);
      await removed.stop();
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
