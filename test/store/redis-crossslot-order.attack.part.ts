import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { ThrowawayRedisServer } from '../support/redis-server.js';
import { TestClock } from './store-contract.js';

describe('store: redis-crossslot-order.attack', () => {
  /**
   * Attack on 4d0c155 ("a read of a key the tick also writes stays in the script, after what was issued
   * before it"; "a key's later operation waits for its earlier one's answer"). The wait was added to
   * commandPerKey only. Its twin, the fallback of a group refused with CROSSSLOT (a plain client on a
   * one-shard cluster-mode endpoint: every first group of a store), still sends each operation alone, all
   * at once: an increment goes as EVALSHA, which a freshly started Redis answers NOSCRIPT, and its EVAL is
   * written after the GET of the same key issued after it in the same tick.
   * Expected (MemoryStore answers exactly `expected` below; so do one Redis, a cluster, and this endpoint's later groups): the read issued after
   * the increment in one tick answers the incremented counter.
   * Not new in 4d0c155: the same test fails on its parent 19eb790 (the fallback dates from 66f04b5); 4d0c155
   * fixed the twin path only.
   * Severity: medium — a decision's own counter read back stale in one tick, on the first group a store
   * sends to a managed cluster-mode endpoint (after every restart or failover, scripts are gone too).
   */
  async function sameTick(store: VerificationStore) {
    return Promise.all([
      store.set('c', '5', 60_000),
      store.increment('c', 2, 60_000),
      store.get('c'),
      store.increment('d', 1, 60_000),
      store.get('d'),
    ]);
  }

  const expected = ['undefined', 'value 7', '7', 'value 1', '1'];
  const shown = (answers: unknown[]) =>
    answers.map((a) =>
      a !== null && typeof a === 'object' ? `value ${(a as { value: number }).value}` : String(a),
    );

  describe('one tick of writes and reads of one key', () => {
    for (const driver of ['ioredis', 'node-redis'] as const) {
      it(`RedisStore, plain ${driver} client on a one-shard cluster-mode endpoint, its first group`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'pv-attack-u-shard-'));
        const server = await ThrowawayRedisServer.start({
          args: (port) => [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(dir, `nodes-${port}.conf`),
          ],
        });
        const admin = new Redis(server.url);
        let plain: Redis | undefined;
        let nodeRedis: ReturnType<typeof createClient> | undefined;
        let store: RedisStore | undefined;
        try {
          await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
          for (let i = 0; !/cluster_state:ok/.test(String(await admin.call('CLUSTER', 'INFO'))); i++) {
            if (i > 100) throw new Error('the one-node cluster did not reach cluster_state:ok');
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
          if (driver === 'ioredis') plain = new Redis(server.url);
          else {
            nodeRedis = createClient({ url: server.url });
            nodeRedis.on('error', () => undefined);
            await nodeRedis.connect();
          }
          store = new RedisStore({ client: (plain ?? nodeRedis)!, clock: new TestClock().now });
          expect(shown(await sameTick(store))).toEqual(expected);
        } finally {
          await store?.close();
          plain?.disconnect();
          await nodeRedis?.close();
          await admin.quit();
          await server.stop();
          rmSync(dir, { recursive: true, force: true });
        }
      });
    }
  });
});
