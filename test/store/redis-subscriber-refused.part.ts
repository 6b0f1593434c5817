/**
 * The subscriber when Redis refuses or is still sending: a SUBSCRIBE refused (an ACL user without channel
 * permissions) fails the store's subscribe and leaves no connection of the store's open, as `CLIENT LIST`
 * sees it; messages of a channel still arriving after its last listener left are dropped without harm.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { connectNodeRedis, eventually, ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: the subscriber when Redis refuses a SUBSCRIBE, or still sends', () => {
  let server: ThrowawayRedisServer;
  let admin: Redis;

  beforeAll(async () => {
    server = await ThrowawayRedisServer.start();
    admin = new Redis(server.url);
    // Every command and key, no channel: SUBSCRIBE is refused (NOPERM).
    await admin.call('ACL', 'SETUSER', 'nochannels', 'on', '>secret', '~*', 'resetchannels', '+@all');
  }, 30_000);

  afterAll(async () => {
    await admin?.quit();
    await server?.stop();
  });

  const connectionsOf = async (user: string): Promise<number> =>
    String(await admin.call('CLIENT', 'LIST'))
      .split('\n')
      .filter((line) => line.includes(` user=${user} `)).length;

  const limitedUrl = (): string => server.url.replace('redis://', 'redis://nochannels:secret@');
  const hosts = {
    ioredis: async () => {
      const client = new Redis(limitedUrl());
      client.on('error', () => undefined);
      await eventually(async () => expect(client.status).toBe('ready'), 10_000);
      return { client, close: () => client.quit().then(() => undefined) };
    },
    'node-redis': async () => {
      const client = await connectNodeRedis(limitedUrl());
      return { client, close: () => client.close() };
    },
  };

  for (const [driver, host] of Object.entries(hosts)) {
    it(`fails the subscribe and closes the connection it opened for it (${driver})`, async () => {
      const { client, close } = await host();
      const store = new RedisStore({ client, keyPrefix: `pv-sub-refused:${randomUUID()}:` });
      try {
        expect(await connectionsOf('nochannels')).toBe(1);
        await expect(store.subscribe('status', () => undefined)).rejects.toBeInstanceOf(
          VerificationStoreUnavailableError,
        );
        // The host's own connection only.
        await eventually(async () => expect(await connectionsOf('nochannels')).toBe(1), 3000);
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await connectionsOf('nochannels')).toBe(1);
      } finally {
        await store.close();
        await close();
      }
    }, 20_000);
  }

  it('opened again but refused, tells no listener it is back until a SUBSCRIBE is accepted', async () => {
    await admin.call('ACL', 'SETUSER', 'revoked', 'on', '>secret', '~*', 'allchannels', '+@all');
    // Its copy gives up when dropped: the store opens a new one, whose SUBSCRIBE Redis may refuse.
    const client = new Redis(server.url.replace('redis://', 'redis://revoked:secret@'), {
      retryStrategy: () => null,
    });
    client.on('error', () => undefined);
    await eventually(async () => expect(client.status).toBe('ready'), 10_000);
    const store = new RedisStore({ client, keyPrefix: `pv-sub-revoked:${randomUUID()}:` });
    try {
      let gaps = 0;
      await store.subscribe(
        'status',
        () => undefined,
        () => void gaps++,
      );
      // Channels revoked: Redis drops the subscriber, and refuses the next one's SUBSCRIBE.
      await admin.call('ACL', 'SETUSER', 'revoked', 'resetchannels');
      await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(gaps).toBe(0);
      await admin.call('ACL', 'SETUSER', 'revoked', 'allchannels');
      await eventually(async () => expect(gaps).toBe(1), 10_000);
    } finally {
      await store.close();
      client.disconnect();
    }
  }, 30_000);

  it('drops messages still arriving for a channel its last listener left, and keeps hearing the others', async () => {
    const client = new Redis(server.url);
    client.on('error', () => undefined);
    const store = new RedisStore({ client, keyPrefix: `pv-sub-late:${randomUUID()}:` });
    const failures: unknown[] = [];
    const onFailure = (error: unknown): void => void failures.push(error);
    process.on('uncaughtException', onFailure);
    try {
      const kept: string[] = [];
      await store.subscribe('kept', (message) => void kept.push(message));
      let heard = 0;
      const leaving = await store.subscribe('busy', () => void heard++);
      // A burst in flight when the listener leaves: some of it reaches the connection after.
      const burst = Promise.all(Array.from({ length: 2000 }, (_, i) => store.publish('busy', `m${i}`)));
      await eventually(async () => expect(heard).toBeGreaterThan(0), 5000);
      leaving();
      await burst;
      await store.publish('kept', 'after');
      await eventually(async () => expect(kept).toEqual(['after']), 5000);
      expect(failures).toEqual([]);
    } finally {
      process.off('uncaughtException', onFailure);
      await store.close();
      await client.quit();
    }
  }, 20_000);
});
