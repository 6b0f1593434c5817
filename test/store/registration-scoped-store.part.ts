/**
 * Two named registrations given one store (RegistrationScopedStore over it): a batch, the one round
 * trip a decision's reads and writes take together, keeps each registration's keys under its name and
 * pools protection's counters, as each single operation does, and stays one batch of the store. Its
 * notices (a session changed, which the status streams are pushed) stay on the registration's own
 * channel: they reach its listeners, on this app and on another app of the deployment, never the other
 * registration's.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import { RegistrationScopedStore } from '../../src/store/registration-scoped-store.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { eventually, sharedRedisUrl, ThrowawayRedisServer } from '../support/redis-server.js';
import { Redis } from 'ioredis';

describe('store: registration-scoped-store', () => {
  describe('RegistrationScopedStore batch', () => {
    it("keeps each registration's keys under its name and pools protect:*, in one batch of the store", async () => {
      const shared = new MemoryStore();
      const north = new RegistrationScopedStore(shared, 'north');
      const south = new RegistrationScopedStore(shared, 'south');
      const batches = jest.spyOn(shared, 'batch');
      await north.batch!([
        { op: 'set', key: 'ledger:day', value: 'north', ttlMs: 60_000 },
        { op: 'increment', key: 'ledger:count', by: 2, ttlMs: 60_000 },
        { op: 'increment', key: 'protect:spend:1', by: 5, ttlMs: 60_000 },
      ]);
      const answers = await south.batch!([
        { op: 'setIfAbsent', key: 'ledger:day', value: 'south', ttlMs: 60_000 },
        { op: 'increment', key: 'ledger:count', by: 1, ttlMs: 60_000 },
        { op: 'increment', key: 'protect:spend:1', by: 5, ttlMs: 60_000 },
        { op: 'get', key: 'ledger:day' },
      ]);
      expect(answers.map((a) => (typeof a === 'object' && a !== null ? a.value : a))).toEqual([
        true,
        1,
        10,
        'south',
      ]);
      expect(batches).toHaveBeenCalledTimes(2);
      await expect(north.get('ledger:day')).resolves.toBe('north');
      await expect(shared.get('north:ledger:count')).resolves.toBe('2');
      await expect(shared.get('south:ledger:count')).resolves.toBe('1');
      await expect(shared.get('ledger:day')).resolves.toBeNull();
      await expect(shared.get('protect:spend:1')).resolves.toBe('10');
      await north.close();
    });
  });

  describe("RegistrationScopedStore over a host's store with the required methods only", () => {
    /** A host's own store: no batch, replaceIfEquals, publish or subscribe (the module takes its fallbacks). */
    function hostStore(inner: MemoryStore): VerificationStore {
      const {
        get,
        set,
        setIfAbsent,
        delete: remove,
        increment,
        schedule,
        claimDue,
        unschedule,
        queueSize,
      } = inner;
      return {
        now: () => inner.now(),
        get: get.bind(inner),
        set: set.bind(inner),
        setIfAbsent: setIfAbsent.bind(inner),
        delete: remove.bind(inner),
        increment: increment.bind(inner),
        schedule: schedule.bind(inner),
        claimDue: claimDue.bind(inner),
        unschedule: unschedule.bind(inner),
        queueSize: queueSize.bind(inner),
        close: () => inner.close(),
      };
    }

    it('offers none of the optional methods the store lacks, so the module takes their fallbacks; the rest scoped', async () => {
      let now = 1_000;
      const inner = new MemoryStore({ clock: () => now });
      const north = new RegistrationScopedStore(hostStore(inner), 'north');
      expect({
        batch: north.batch,
        replaceIfEquals: north.replaceIfEquals,
        publish: north.publish,
        subscribe: north.subscribe,
      }).toStrictEqual({
        batch: undefined,
        replaceIfEquals: undefined,
        publish: undefined,
        subscribe: undefined,
      });
      await north.set('ledger:day', 'n', 60_000);
      await expect(inner.get('north:ledger:day')).resolves.toBe('n');
      // Its clock is the store's (a session's times and TTLs), not one of its own.
      now = 5_000;
      expect(north.now()).toBe(5_000);
      // Closing the registration's view closes the store: nothing is left open when the app shuts down.
      await north.close();
      await expect(inner.get('north:ledger:day')).rejects.toThrow(VerificationStoreUnavailableError);
    });
  });

  describe('RegistrationScopedStore single operations, as its batch', () => {
    /** Each write operation of the store, on `key` of `store`: what a decision writes outside a batch. */
    const writes = [
      ['set', (store: VerificationStore, key: string) => store.set(key, '7', 60_000)],
      ['setIfAbsent', (store: VerificationStore, key: string) => store.setIfAbsent(key, '7', 60_000)],
      ['increment', (store: VerificationStore, key: string) => store.increment(key, 7, 60_000)],
    ] as const;

    it.each(writes)(
      "%s pools protect:* between the registrations and keeps each one's own keys under its name",
      async (_op, write) => {
        const shared = new MemoryStore();
        const north = new RegistrationScopedStore(shared, 'north');
        const south = new RegistrationScopedStore(shared, 'south');
        await write(north, 'protect:start:ip:1');
        await write(north, 'ledger:day');
        // Protection's counter is one for both registrations; the registration's own key is north's alone.
        await expect(south.get('protect:start:ip:1')).resolves.toBe('7');
        await expect(shared.get('protect:start:ip:1')).resolves.toBe('7');
        await expect(south.get('ledger:day')).resolves.toBeNull();
        await expect(north.get('ledger:day')).resolves.toBe('7');
        await expect(shared.get('north:ledger:day')).resolves.toBe('7');
        // The same counts through a batch of the other registration.
        const [pooled] = await south.batch!([{ op: 'get', key: 'protect:start:ip:1' }]);
        expect(pooled).toBe('7');
        await south.delete('protect:start:ip:1');
        await expect(north.get('protect:start:ip:1')).resolves.toBeNull();
        // A registration's delete of its own key leaves the other's key of that name.
        await write(south, 'ledger:day');
        await north.delete('ledger:day');
        await expect(north.get('ledger:day')).resolves.toBeNull();
        await expect(south.get('ledger:day')).resolves.toBe('7');
        await shared.close();
      },
    );

    it("replaceIfEquals (a history slot's compare-and-swap) swaps the registration's own key, never the other's of that name", async () => {
      const shared = new MemoryStore();
      const north = new RegistrationScopedStore(shared, 'north');
      const south = new RegistrationScopedStore(shared, 'south');
      await north.set('history:slot', 'n1', 60_000);
      await south.set('history:slot', 's1', 60_000);
      await expect(south.replaceIfEquals!('history:slot', 'n1', 'taken', 60_000)).resolves.toBe(false);
      await expect(north.replaceIfEquals!('history:slot', 'n1', 'n2', 60_000)).resolves.toBe(true);
      await expect(north.get('history:slot')).resolves.toBe('n2');
      await expect(south.get('history:slot')).resolves.toBe('s1');
      await expect(shared.get('history:slot')).resolves.toBeNull();
      await shared.close();
    });

    it('replaceIfEquals writes with the options given: an evictable value stays one a bounded store may drop', async () => {
      const shared = new MemoryStore({ maxEvictableEntries: 1 });
      const north = new RegistrationScopedStore(shared, 'north');
      await north.set('protect:hold', 'h0', 60_000, { evictable: true });
      await expect(
        north.replaceIfEquals!('protect:hold', 'h0', 'h1', 60_000, { evictable: true }),
      ).resolves.toBe(true);
      // Another caller's entry takes the one evictable place.
      await north.set('protect:another', '1', 60_000, { evictable: true });
      await expect(north.get('protect:hold')).resolves.toBeNull();
      await shared.close();
    });
  });

  describe.each([
    [
      'one MemoryStore',
      (): (() => VerificationStore) => {
        const shared = new MemoryStore();
        return () => shared;
      },
    ],
    [
      'one Redis, one prefix the host chose, two apps',
      (): (() => VerificationStore) => {
        const keyPrefix = `pv-scoped-notices:${randomUUID()}:`;
        return () => new RedisStore({ url: sharedRedisUrl(), keyPrefix });
      },
    ],
  ])('RegistrationScopedStore notices on %s', (_label, deployment) => {
    const opened: VerificationStore[] = [];
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((store) => store.close()));
    });

    /** The messages `store` hears on `channel` from now on. */
    const inbox = async (store: VerificationStore, channel: string): Promise<string[]> => {
      const heard: string[] = [];
      await store.subscribe!(channel, (message) => void heard.push(message));
      return heard;
    };
    /** Waits (real time: pub/sub has no clock) until `heard` holds `count` messages, or 3 s. */
    const settled = async (heard: string[], count: number): Promise<string[]> => {
      const deadline = Date.now() + 3000;
      while (heard.length < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return [...heard];
    };

    it("a registration's due-queue is its own: what it schedules, claims, counts and unschedules, never the other's", async () => {
      const shared = new MemoryStore({ clock: () => 1_000 });
      const north = new RegistrationScopedStore(shared, 'north');
      const south = new RegistrationScopedStore(shared, 'south');
      await north.schedule('reconcile', 'req-1', 0);
      await south.schedule('reconcile', 'req-1', 0);
      await south.schedule('reconcile', 'req-2', 0);
      expect([await north.queueSize('reconcile'), await south.queueSize('reconcile')]).toEqual([1, 2]);
      // A settled session leaves its registration's queue, and only that one.
      await north.unschedule('reconcile', 'req-1');
      expect([await north.queueSize('reconcile'), await south.queueSize('reconcile')]).toEqual([0, 2]);
      expect(await north.claimDue('reconcile', 10, 5_000)).toEqual([]);
      expect((await south.claimDue('reconcile', 10, 5_000)).sort()).toEqual(['req-1', 'req-2']);
      await shared.close();
    });

    it('a registration’s listener on Redis is told when its subscription was lost and is back', async () => {
      const server = await ThrowawayRedisServer.start();
      const admin = new Redis(server.url);
      const shared = new RedisStore({ url: server.url, keyPrefix: `${randomUUID()}:` });
      try {
        let gaps = 0;
        await new RegistrationScopedStore(shared, 'north').subscribe!(
          'session-changed',
          () => undefined,
          () => void gaps++,
        );
        await admin.call('CLIENT', 'KILL', 'TYPE', 'pubsub');
        await eventually(async () => expect(gaps).toBe(1), 5000);
      } finally {
        await shared.close();
        await admin.quit();
        await server.stop();
      }
    });

    it("a registration's notice reaches its own listeners on every app, never the other registration's", async () => {
      const storeOf = deployment();
      const app = (name: string): VerificationStore => {
        const store = new RegistrationScopedStore(storeOf(), name);
        opened.push(store);
        return store;
      };
      const [north, south, northElsewhere] = [app('north'), app('south'), app('north')];
      const northHears = await inbox(north, 'session-changed');
      const elsewhereHears = await inbox(northElsewhere, 'session-changed');
      const southHears = await inbox(south, 'session-changed');

      await north.publish!('session-changed', 'north-1');
      expect(await settled(northHears, 1)).toEqual(['north-1']);
      expect(await settled(elsewhereHears, 1)).toEqual(['north-1']);
      await south.publish!('session-changed', 'south-1');
      expect(await settled(southHears, 1)).toEqual(['south-1']);
      // The last notice is north's: a notice of the other registration would have come before it.
      await north.publish!('session-changed', 'north-2');
      expect(await settled(northHears, 2)).toEqual(['north-1', 'north-2']);
      expect(await settled(elsewhereHears, 2)).toEqual(['north-1', 'north-2']);
      expect(southHears).toEqual(['south-1']);
    });
  });
});
