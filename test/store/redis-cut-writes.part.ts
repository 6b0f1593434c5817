/**
 * A write the store was told failed because the connection dropped is never made later, once the store has
 * reconnected: neither one cut off on its way to Redis (the client resending what went unanswered) nor one
 * issued as the connection went (the client queueing it until it is back). A host that retries, or a code
 * the user was told was not stored, must not find it stored after all. The connection runs through a proxy
 * that can swallow what the store sends, drop it, and hold the next one unanswered. On either library: a client
 * that queued the write would send it into the next connection (node-redis as soon as it is open, before its
 * handshake is answered: the store's deadline, its abort signal, comes too late to take it back).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { RedisStore } from '../../src/store/redis.store.js';
import { RedisProxy } from '../support/redis-proxy.js';
import { eventually, sharedRedisUrl } from '../support/redis-server.js';

const COMMAND_TIMEOUT_MS = 300;

describe.each(['ioredis', 'redis'] as const)(
  'store on %s: a write refused while the connection drops is never made later',
  (driver) => {
    /** A store through a fresh proxy, the admin client reading Redis directly, and what ends them. */
    async function throughProxy() {
      const proxy = await RedisProxy.start(sharedRedisUrl());
      const keyPrefix = `pv:cut:${randomUUID()}:`;
      const store = new RedisStore({
        url: proxy.url,
        driver,
        commandTimeoutMs: COMMAND_TIMEOUT_MS,
        keyPrefix,
      });
      const admin = new Redis(sharedRedisUrl());
      // One command alone: the connection is up, and no group of several has gone yet.
      await eventually(() => store.get('warm'), 5_000);
      const stored = (key: string) => admin.exists(keyPrefix + key);
      const end = async () => {
        await store.close();
        await proxy.stop();
        admin.disconnect();
      };
      return { proxy, store, stored, end };
    }

    // ioredis resends nothing while maxRetriesPerRequest is 0 (it rejects what the connection held, emptying the
    // queue it would resend), whatever autoResendUnfulfilledCommands says: this holds the two options together.
    it('a write cut off unanswered by the drop', async () => {
      const { proxy, store, stored, end } = await throughProxy();
      try {
        proxy.swallowing = true;
        const cut = store.set('cut', 'x', 60_000);
        cut.catch(() => undefined);
        // Written to the connection (the proxy swallows it), then the connection goes.
        await new Promise((resolve) => setImmediate(resolve));
        proxy.swallowing = false;
        proxy.drop();
        await expect(cut).rejects.toMatchObject({ name: 'VerificationStoreUnavailableError' });
        // Reconnected: anything resent would go ahead of this answer.
        await eventually(() => store.get('probe'), 5_000);
        expect(await stored('cut')).toBe(0);
      } finally {
        await end();
      }
    });

    it('a write issued as the connection drops, its deadline passing before the store reconnects', async () => {
      const { proxy, store, stored, end } = await throughProxy();
      try {
        proxy.swallowing = true;
        // The first group of several: a later write waits for its answer, then goes out as the connection has gone.
        const first = store.batch([
          { op: 'set', key: 'a', value: '1', ttlMs: 60_000 },
          { op: 'set', key: 'b', value: '1', ttlMs: 60_000 },
        ]);
        first.catch(() => undefined);
        await new Promise((resolve) => setImmediate(resolve));
        const late = store.set('late', 'x', 60_000);
        late.catch(() => undefined);
        await new Promise((resolve) => setImmediate(resolve));
        // The store's next connection is held unanswered past the write's deadline.
        proxy.hold();
        proxy.swallowing = false;
        proxy.drop();
        await expect(late).rejects.toMatchObject({ name: 'VerificationStoreUnavailableError' });
        await expect(first).rejects.toMatchObject({ name: 'VerificationStoreUnavailableError' });
        proxy.release();
        await eventually(() => store.get('probe'), 5_000);
        expect(await stored('late')).toBe(0);
      } finally {
        await end();
      }
    });
  },
);
