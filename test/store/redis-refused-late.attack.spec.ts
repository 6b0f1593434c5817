import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { eventually, ThrowawayRedisServer } from '../support/redis-server.js';

/**
 * Issue 45, the first group on a cluster-mode endpoint behind a plain client (32f5f3b): Redis refuses
 * its call of several slots (CROSSSLOT) and the store sends its operations again a key at a time.
 * When that refusal comes back after the store's deadline, the host was told the writes failed, and
 * the store has sent later writes of the same keys since: nothing of the refused group may be sent then.
 */
class HeldClient {
  holding = false;
  private readonly held: (() => void)[] = [];
  sent = 0;

  constructor(readonly client: Redis) {}

  get status(): string {
    return this.client.status;
  }

  release(): void {
    this.holding = false;
    for (const deliver of this.held.splice(0)) deliver();
  }

  call(command: string, ...args: string[]): Promise<unknown> {
    this.sent += 1;
    const reply = this.client.call(command, ...args);
    if (!this.holding) return reply;
    // Its rejection is delivered on release.
    reply.catch(() => undefined);
    return new Promise((resolve, reject) => this.held.push(() => reply.then(resolve, reject)));
  }

  on(event: 'ready', listener: () => void): unknown {
    return this.client.on(event, listener);
  }

  removeListener(event: 'ready', listener: () => void): unknown {
    return this.client.removeListener(event, listener);
  }

  quit(): Promise<unknown> {
    return this.client.quit();
  }

  disconnect(): void {
    this.client.disconnect();
  }
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('RedisStore: a first group refused (CROSSSLOT) after its deadline', () => {
  it('a set of k reported failed, then a delete of k answered: k stays gone once the refusal arrives', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pv-refused-late-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const server = await ThrowawayRedisServer.start({
      args: (port) => ['--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`)],
    });
    cleanups.push(() => server.stop());
    const client = new Redis(server.url);
    cleanups.push(() => client.disconnect());
    await client.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    await eventually(async () => {
      if (!/cluster_state:ok/.test(String(await client.call('CLUSTER', 'INFO')))) throw new Error('not ok');
    }, 5_000);
    const held = new HeldClient(client);
    const store = new RedisStore({ client: held, commandTimeoutMs: 200 });
    cleanups.push(() => store.close());

    // The first group's answer (CROSSSLOT) is slower than the deadline: the host is told it failed.
    held.holding = true;
    const first = Promise.all([store.set('k', 'first', 60_000), store.set('k1', '1', 60_000)]);
    await expect(first).rejects.toThrow(/no answer within 200 ms/);
    // The host goes on: k deleted, and answered.
    held.holding = false;
    await store.delete('k');
    const sentBefore = held.sent;
    held.release();
    // Let the late refusal reach the store, and anything it sends then reach Redis (one connection: in order).
    await new Promise((resolve) => setImmediate(resolve));
    await client.ping();
    await expect(store.get('k')).resolves.toBeNull();
    // Nothing of the refused group was sent after its deadline.
    expect(held.sent).toBe(sentBefore + 1);
  });
});
