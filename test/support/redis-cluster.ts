import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, ThrowawayRedisServer } from './redis-server.js';

const run = promisify(execFile);

/** A throwaway `redis-server` in cluster mode, its node file in `dir`, not yet part of a cluster. */
export async function clusterNode(dir: string): Promise<ThrowawayRedisServer> {
  // The cluster bus gets its own free port (the default, port + 10000, may not exist).
  const busPort = await freePort();
  return ThrowawayRedisServer.start({
    args: (port) => [
      '--cluster-enabled',
      'yes',
      '--cluster-port',
      String(busPort),
      '--cluster-config-file',
      join(dir, `nodes-${port}.conf`),
      '--cluster-node-timeout',
      '5000',
    ],
  });
}

/**
 * A real Redis Cluster of three masters (no replicas) on loopback, made of throwaway
 * `redis-server` processes in cluster mode and joined with `redis-cli --cluster create`: the
 * 16,384 slots are split across the three, so keys of different sessions live on different
 * nodes and a command or script that mixes slots fails with CROSSSLOT, as on a managed cluster.
 */
export class ThrowawayRedisCluster {
  private constructor(
    readonly nodes: ThrowawayRedisServer[],
    private readonly dir: string,
  ) {}

  static async start(): Promise<ThrowawayRedisCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'pv-redis-cluster-'));
    const nodes: ThrowawayRedisServer[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        nodes.push(await clusterNode(dir));
      }
      await run('redis-cli', [
        '--cluster',
        'create',
        ...nodes.map((node) => `127.0.0.1:${node.port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ]);
      const cluster = new ThrowawayRedisCluster(nodes, dir);
      await cluster.untilReady();
      return cluster;
    } catch (error) {
      await Promise.all(nodes.map((node) => node.stop()));
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** `host:port` of every master, as cluster clients take their seed nodes. */
  get seeds(): { host: string; port: number }[] {
    return this.nodes.map((node) => ({ host: '127.0.0.1', port: node.port }));
  }

  /** Resolves once every node reports `cluster_state:ok` (slots assigned and gossiped). */
  private async untilReady(): Promise<void> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const states = await Promise.all(
        this.nodes.map(async (node) => {
          const { stdout } = await run('redis-cli', ['-p', String(node.port), 'cluster', 'info']);
          return /cluster_state:ok/.test(stdout);
        }),
      );
      if (states.every(Boolean)) return;
      if (Date.now() > deadline) throw new Error('the Redis Cluster did not reach cluster_state:ok in 20 s');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
