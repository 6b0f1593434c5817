import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { eventually, ThrowawayRedisServer } from './redis-server.js';

/**
 * The host's ioredis client as RedisStore sees it, counting and telling what the store sends, and able
 * to hold the store's view of replies (each command runs on Redis at once; only its answer waits), as a
 * slow network would.
 */
export class HeldRedisClient {
  holding = false;
  /** Commands the store has sent. */
  sent = 0;
  private readonly held: (() => void)[] = [];
  private readonly waiting: ((reply: Promise<unknown>) => void)[] = [];

  constructor(readonly client: Redis) {}

  get status(): string {
    return this.client.status;
  }

  /** Resolves once the store has sent its next command, with Redis' answer to it (held or not). */
  nextSent(): Promise<{ answered: Promise<unknown> }> {
    return new Promise((wake) => this.waiting.push((answered) => wake({ answered })));
  }

  /** Delivers every held answer (a rejection included) and holds no more. */
  release(): void {
    this.holding = false;
    for (const deliver of this.held.splice(0)) deliver();
  }

  call(command: string, ...args: string[]): Promise<unknown> {
    this.sent += 1;
    const reply = this.client.call(command, ...args);
    const answered = reply.catch(() => undefined);
    for (const wake of this.waiting.splice(0)) wake(answered);
    if (!this.holding) return reply;
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

/**
 * A one-node cluster-mode Redis (every slot its own) behind a plain ioredis client: Redis refuses a
 * call of several slots (CROSSSLOT). `cleanups` receives what stops it.
 */
export async function oneNodeClusterMode(
  cleanups: (() => unknown)[],
): Promise<{ client: Redis; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'pv-cluster-mode-'));
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
  return { client, url: server.url };
}
