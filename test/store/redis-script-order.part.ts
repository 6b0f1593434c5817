import { afterEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { KEYS_PER_CALL, RedisStore } from '../../src/store/redis.store.js';
import { KEY_OPERATIONS } from '../../src/store/redis-scripts.js';
import { HeldRedisClient, oneNodeClusterMode } from '../support/held-redis.js';
import { ThrowawayRedisServer } from '../support/redis-server.js';

describe('store: redis-script-order', () => {
  /**
   * Issue 45: a key's writes reach Redis in the order the store issued them, also once Redis has lost its
   * scripts (SCRIPT FLUSH, a restart, a failover). A script call sent as EVALSHA and answered NOSCRIPT did
   * not run; sent again, it would land after whatever the store sent in between (a plain SET, or a script
   * call that found the script loaded meanwhile by another instance). So it is sent again only when the
   * store has sent nothing since; otherwise it fails as a Redis failure does, and the later write stands.
   * Each test below issues two writes of `k` one after the other, the first still unanswered, and reads `k`.
   * The twin: a cluster-mode endpoint behind a plain client refuses a call of several slots (CROSSSLOT), and
   * the store sends its operations again a key at a time.
   */

  const cleanups: (() => Promise<unknown> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function setup() {
    const server = await ThrowawayRedisServer.start();
    cleanups.push(() => server.stop());
    const admin = new Redis(server.url);
    cleanups.push(() => admin.disconnect());
    const client = new Redis(server.url);
    cleanups.push(() => client.disconnect());
    await client.ping();
    const watched = new HeldRedisClient(client);
    const store = new RedisStore({ client: watched });
    cleanups.push(() => store.close());
    // The store has run its script, in a group of several keys: Redis knew it, then forgot it.
    await Promise.all([store.increment('warm', 1, 60_000), store.increment('warm2', 1, 60_000)]);
    await admin.script('FLUSH');
    return { admin, watched, store };
  }

  /** The first write: two keys, so a script call (a group of one would be a plain SET). */
  const first = (store: RedisStore) =>
    Promise.all([store.set('k', 'first', 60_000), store.set('k1', '1', 60_000)]);

  describe('RedisStore: a key’s writes after Redis lost its scripts', () => {
    const earlierWrites = {
      'a script call of several keys': first,
      'a script call of k alone': (store: RedisStore) => store.setIfAbsent('k', 'first', 60_000),
    };
    for (const [name, earlierWrite] of Object.entries(earlierWrites)) {
      it(`a delete of k issued while ${name} that wrote k before it is unanswered: the earlier fails, k is gone`, async () => {
        const { watched, store } = await setup();
        const sent = watched.nextSent();
        const earlier = earlierWrite(store);
        // The later write goes out once the earlier is on the wire, unanswered.
        await sent;
        const later = store.delete('k');
        await expect(earlier).rejects.toThrow(/store unavailable: \w+ failed \(NOSCRIPT/);
        await later;
        await expect(store.get('k')).resolves.toBeNull();
      });
    }

    it('a group of two script calls after Redis lost its scripts: each operation answered ran, each refused did not', async () => {
      const { admin, store } = await setup();
      const keys = Array.from({ length: KEYS_PER_CALL + 72 }, (_, i) => `n${i}`);
      const outcomes = await Promise.allSettled(keys.map((key) => store.increment(key, 1, 60_000)));
      const written = await Promise.all(keys.map((key) => admin.exists(`pv:${key}`)));
      // The first call was answered NOSCRIPT with the second sent after it: refused, not run; the second
      // (the last sent) was sent again with its text and ran.
      expect(outcomes.map((o) => o.status)).toEqual([
        ...Array<string>(KEYS_PER_CALL).fill('rejected'),
        ...Array<string>(72).fill('fulfilled'),
      ]);
      expect(written).toEqual(outcomes.map((o) => (o.status === 'fulfilled' ? 1 : 0)));
    });

    it('a script call by hash refused for another reason (LOADING) fails as Redis answered, and is not sent again', async () => {
      const server = await ThrowawayRedisServer.start();
      cleanups.push(() => server.stop());
      const client = new Redis(server.url);
      cleanups.push(() => client.disconnect());
      const sent: string[] = [];
      let refuse = false;
      const refusing = new Proxy(client, {
        get(target, property, receiver) {
          if (property !== 'call') return Reflect.get(target, property, receiver) as unknown;
          return (command: string, ...args: string[]) => {
            sent.push(command);
            if (refuse && command === 'EVALSHA')
              return Promise.reject(new Error('LOADING Redis is loading the dataset in memory'));
            return target.call(command, ...args);
          };
        },
      });
      const store = new RedisStore({ client: refusing });
      cleanups.push(() => store.close());
      await store.increment('k', 1, 60_000);
      refuse = true;
      sent.length = 0;
      await expect(store.increment('k', 1, 60_000)).rejects.toThrow(/LOADING/);
      expect(sent).toEqual(['EVALSHA']);
      refuse = false;
      await expect(store.increment('k', 1, 60_000)).resolves.toMatchObject({ value: 2 });
    });

    it('a script call alone on the wire: answered NOSCRIPT, sent again with its text, and k is written once', async () => {
      const { admin, store } = await setup();
      await admin.config('RESETSTAT');
      await expect(store.increment('k', 5, 60_000)).resolves.toMatchObject({ value: 5 });
      await expect(store.increment('k', 1, 60_000)).resolves.toMatchObject({ value: 6 });
      const stats = String(await admin.info('commandstats'));
      expect(stats).toMatch(/cmdstat_eval:calls=1,/);
      expect(stats).toMatch(/cmdstat_evalsha:calls=2,/);
    });

    it('a script call of k that finds the script loaded by another instance meanwhile: the earlier fails, k is the later value', async () => {
      const { admin, watched, store } = await setup();
      watched.holding = true;
      const sent = watched.nextSent();
      const earlier = first(store);
      // Redis has run the earlier call (its answer is held from the store); then another instance loads the script.
      await (
        await sent
      ).answered;
      await admin.script('LOAD', KEY_OPERATIONS.lua);
      watched.holding = false;
      const laterSent = watched.nextSent();
      const later = Promise.all([store.set('k', 'second', 60_000), store.set('k2', '2', 60_000)]);
      await (
        await laterSent
      ).answered;
      watched.release();
      await expect(earlier).rejects.toThrow(/NOSCRIPT/);
      await later;
      await expect(store.get('k')).resolves.toBe('second');
    });
  });

  describe('RedisStore: a key’s writes on a cluster-mode endpoint behind a plain client', () => {
    // Its first group's call of several slots is refused (CROSSSLOT) before it runs anything, and sent
    // again a key at a time: after whatever the store sent on those keys meanwhile.
    it('a delete of k issued while the first group’s call (k and k1) is unanswered: k is gone', async () => {
      const { watched, store } = await clusterModeSetup();
      const sent = watched.nextSent();
      const earlier = first(store);
      await sent;
      const later = store.delete('k');
      await Promise.all([earlier, later]);
      await expect(store.get('k')).resolves.toBeNull();
    });

    it('a message published while the first group’s call (k and k1) is unanswered reaches a subscriber after k is written', async () => {
      const { client, watched, store, url } = await clusterModeSetup();
      const subscriber = new Redis(url);
      cleanups.push(() => subscriber.disconnect());
      const seen: (string | null)[] = [];
      const heard = new Promise<void>((resolve) =>
        subscriber.on('message', () => void client.get('pv:k').then((raw) => (seen.push(raw), resolve()))),
      );
      await subscriber.subscribe('pv:changed');
      // The refusal of the first group's call (CROSSSLOT) is held from the store: its keys are not sent again yet.
      watched.holding = true;
      const sent = watched.nextSent();
      const earlier = first(store);
      await sent;
      const later = store.publish('changed', 'k');
      // Whatever the store sends meanwhile has time to reach the subscriber.
      await Promise.race([heard, new Promise((resolve) => setTimeout(resolve, 200))]);
      watched.release();
      await Promise.all([earlier, later, heard]);
      expect(seen).toEqual([expect.stringMatching(/:first$/)]);
    });
  });

  /** A one-node cluster-mode Redis behind a plain client: a call of several slots is refused CROSSSLOT. */
  async function clusterModeSetup() {
    const { client, url } = await oneNodeClusterMode(cleanups);
    const watched = new HeldRedisClient(client);
    const store = new RedisStore({ client: watched });
    cleanups.push(() => store.close());
    return { client, watched, store, url };
  }
});
