import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { storeBatch, type StoreOperation } from '../../src/store/store-batch.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';

/** A clock the test moves by hand: TTLs are checked without sleeping. */
export class TestClock {
  private current = 1_700_000_000_000;
  readonly now = (): number => this.current;

  advance(ms: number): void {
    this.current += ms;
  }
}

export interface StoreContractHarness {
  /**
   * A new store on `clock`. Stores created with the same `namespace` share their data when
   * `sharesState` is true (two instances on one Redis); different namespaces never do.
   * `maxEntries`: a bounded store holds at most that many entries of each class (kept, evictable);
   * a store that never evicts (Redis) ignores it.
   */
  create(clock: () => number, namespace: string, maxEntries?: number): Promise<VerificationStore>;
  sharesState: boolean;
}

const CONCURRENCY = 50;

/** The behaviour every VerificationStore must show; run by each store's spec. */
export function describeStoreContract(name: string, harness: StoreContractHarness): void {
  describe(`VerificationStore contract: ${name}`, () => {
    let clock: TestClock;
    let namespace: string;
    let opened: VerificationStore[];
    let store: VerificationStore;

    const open = async (ns = namespace, maxEntries?: number): Promise<VerificationStore> => {
      const created = await harness.create(clock.now, ns, maxEntries);
      opened.push(created);
      return created;
    };

    beforeEach(async () => {
      clock = new TestClock();
      namespace = randomUUID();
      opened = [];
      store = await open();
    });

    afterEach(async () => {
      await Promise.all(opened.map((s) => s.close()));
    });

    it('reads time from its clock', () => {
      expect(store.now()).toBe(clock.now());
      clock.advance(12_345);
      expect(store.now()).toBe(clock.now());
    });

    describe('get / set / delete', () => {
      it('answers null for a key never set', async () => {
        await expect(store.get('missing')).resolves.toBeNull();
      });

      it('returns exactly the value that was set, whatever it contains', async () => {
        const values = [
          '',
          'plain',
          'a:b:c',
          '{"phone":"+79001234567","n":1}',
          'юникод ✓',
          '1700000000000:x',
        ];
        for (const [index, value] of values.entries()) await store.set(`k${index}`, value, 60_000);
        for (const [index, value] of values.entries())
          await expect(store.get(`k${index}`)).resolves.toBe(value);
      });

      it('keeps a value until just before its TTL and drops it at the TTL', async () => {
        await store.set('k', 'v', 1000);
        clock.advance(999);
        await expect(store.get('k')).resolves.toBe('v');
        clock.advance(1);
        await expect(store.get('k')).resolves.toBeNull();
      });

      it('lets a later set replace both the value and the TTL', async () => {
        await store.set('k', 'first', 1000);
        await store.set('k', 'second', 5000);
        clock.advance(2000);
        await expect(store.get('k')).resolves.toBe('second');
        clock.advance(3000);
        await expect(store.get('k')).resolves.toBeNull();
      });

      it('expires entries after a jump of days on the clock', async () => {
        await store.set('k', 'v', 60_000);
        clock.advance(3 * 24 * 3600_000);
        await expect(store.get('k')).resolves.toBeNull();
      });

      it('deletes a key, and deleting a missing key is not an error', async () => {
        await store.set('k', 'v', 60_000);
        await store.delete('k');
        await expect(store.get('k')).resolves.toBeNull();
        await expect(store.delete('never-set')).resolves.toBeUndefined();
      });

      it('rejects a TTL that is not a positive number', async () => {
        await expect(store.set('k', 'v', 0)).rejects.toThrow(RangeError);
        await expect(store.set('k', 'v', -5)).rejects.toThrow(RangeError);
        await expect(store.set('k', 'v', Number.NaN)).rejects.toThrow(RangeError);
        // The message names the argument and the value (a host's own call with a bad TTL reads it).
        await expect(store.set('k', 'v', -5)).rejects.toThrow('ttlMs must be a positive number, got -5');
        await expect(store.get('k')).resolves.toBeNull();
      });

      it('refuses a value that is not text, on every write, and stores nothing (a plain-JS caller)', async () => {
        const notText = (value: unknown) => value as string;
        const refusal = (got: string) => new TypeError(`value must be a string, got ${got}`);
        await expect(store.set('k', notText(undefined), 1000)).rejects.toThrow(refusal('undefined'));
        await expect(store.set('k', notText(42), 1000)).rejects.toThrow(refusal('number'));
        await expect(store.setIfAbsent('k', notText(null), 1000)).rejects.toThrow(refusal('null'));
        await expect(store.get('k')).resolves.toBeNull();
        await store.set('k', 'v', 1000);
        await expect(store.replaceIfEquals!('k', 'v', notText({}), 1000)).rejects.toThrow(refusal('object'));
        await expect(
          store.batch!([{ op: 'setIfAbsent', key: 'j', value: notText(undefined), ttlMs: 1000 }]),
        ).rejects.toThrow(refusal('undefined'));
        await expect(store.get('k')).resolves.toBe('v');
        await expect(store.get('j')).resolves.toBeNull();
      });
    });

    describe('setIfAbsent', () => {
      it('sets only the first time and keeps the first value', async () => {
        await expect(store.setIfAbsent('k', 'first', 1000)).resolves.toBe(true);
        await expect(store.setIfAbsent('k', 'second', 1000)).resolves.toBe(false);
        await expect(store.get('k')).resolves.toBe('first');
      });

      it('sets again once the earlier value has expired, with a fresh TTL', async () => {
        await store.setIfAbsent('k', 'first', 1000);
        clock.advance(999);
        await expect(store.setIfAbsent('k', 'early', 1000)).resolves.toBe(false);
        clock.advance(1);
        await expect(store.setIfAbsent('k', 'second', 1000)).resolves.toBe(true);
        await expect(store.get('k')).resolves.toBe('second');
        clock.advance(999);
        await expect(store.get('k')).resolves.toBe('second');
        clock.advance(1);
        await expect(store.get('k')).resolves.toBeNull();
      });

      it('sets again after a delete, and does not set over a value from set()', async () => {
        await store.set('k', 'plain', 1000);
        await expect(store.setIfAbsent('k', 'other', 1000)).resolves.toBe(false);
        await store.delete('k');
        await expect(store.setIfAbsent('k', 'other', 1000)).resolves.toBe(true);
      });

      it(`lets exactly one of ${CONCURRENCY} concurrent callers win`, async () => {
        const stores = harness.sharesState ? [store, await open()] : [store];
        const results = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) =>
            stores[i % stores.length].setIfAbsent('race', `caller-${i}`, 60_000),
          ),
        );
        const winners = results.flatMap((won, i) => (won ? [i] : []));
        expect(winners).toHaveLength(1);
        await expect(store.get('race')).resolves.toBe(`caller-${winners[0]}`);
      });

      it('rejects a TTL that is not a positive number', async () => {
        await expect(store.setIfAbsent('k', 'v', 0)).rejects.toThrow(RangeError);
      });
    });

    describe('replaceIfEquals (optional)', () => {
      it('replaces or removes only a live value equal to the one expected, with the new TTL', async () => {
        if (!store.replaceIfEquals) return;
        await store.set('k', 'old', 1_000);
        await expect(store.replaceIfEquals('k', 'other', 'new', 500)).resolves.toBe(false);
        expect(await store.get('k')).toBe('old');
        await expect(store.replaceIfEquals('k', 'old', 'new', 500)).resolves.toBe(true);
        expect(await store.get('k')).toBe('new');
        clock.advance(499);
        expect(await store.get('k')).toBe('new');
        clock.advance(1);
        expect(await store.get('k')).toBeNull();
        await expect(store.replaceIfEquals('k', 'new', null, 1)).resolves.toBe(false);
        await store.set('k', 'again', 1_000);
        await expect(store.replaceIfEquals('k', 'again', null, 1)).resolves.toBe(true);
        expect(await store.get('k')).toBeNull();
        await expect(store.replaceIfEquals('absent', '', 'x', 1_000)).resolves.toBe(false);
      });

      it(`lets exactly one of ${CONCURRENCY} concurrent replacements of one value win`, async () => {
        if (!store.replaceIfEquals) return;
        await store.set('race', 'v0', 10_000);
        const won = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) =>
            store.replaceIfEquals!('race', 'v0', `v${i + 1}`, 10_000),
          ),
        );
        expect(won.filter(Boolean)).toHaveLength(1);
      });
    });

    describe('increment', () => {
      it('starts a counter at `by` with a window ending at now + ttl', async () => {
        const start = clock.now();
        await expect(store.increment('c', 1, 10_000)).resolves.toEqual({
          value: 1,
          expiresAt: start + 10_000,
        });
        await expect(store.get('c')).resolves.toBe('1');
      });

      it('adds to a live counter without moving its window (fixed window)', async () => {
        const start = clock.now();
        await store.increment('c', 2, 10_000);
        clock.advance(4000);
        await expect(store.increment('c', 3, 99_000)).resolves.toEqual({
          value: 5,
          expiresAt: start + 10_000,
        });
        await expect(store.increment('c', -1, 10_000)).resolves.toEqual({
          value: 4,
          expiresAt: start + 10_000,
        });
      });

      it('with renew, each increment starts its window again (alone and in a batch); without, the window stays', async () => {
        await store.increment('c', 1, 10_000, { renew: true });
        clock.advance(9_999);
        const renewedAt = clock.now();
        await expect(store.increment('c', 1, 10_000, { renew: true })).resolves.toEqual({
          value: 2,
          expiresAt: renewedAt + 10_000,
        });
        clock.advance(9_999);
        await expect(store.get('c')).resolves.toBe('2');
        const [counted] = await storeBatch(store, [
          { op: 'increment', key: 'c', by: 1, ttlMs: 10_000, options: { renew: true } },
        ]);
        expect(counted).toEqual({ value: 3, expiresAt: clock.now() + 10_000 });
        // A plain increment keeps the window the last renewal set.
        const windowEnd = clock.now() + 10_000;
        clock.advance(5_000);
        await expect(store.increment('c', 1, 60_000)).resolves.toEqual({ value: 4, expiresAt: windowEnd });
        clock.advance(5_000);
        await expect(store.get('c')).resolves.toBeNull();
      });

      it('starts again from zero once the window has ended', async () => {
        await store.increment('c', 7, 1000);
        clock.advance(1000);
        const restart = clock.now();
        await expect(store.increment('c', 1, 5000)).resolves.toEqual({ value: 1, expiresAt: restart + 5000 });
        clock.advance(4999);
        await expect(store.get('c')).resolves.toBe('1');
        clock.advance(1);
        await expect(store.get('c')).resolves.toBeNull();
      });

      it('counts a value written with set() as a counter', async () => {
        const start = clock.now();
        await store.set('c', '41', 3000);
        await expect(store.increment('c', 1, 60_000)).resolves.toEqual({
          value: 42,
          expiresAt: start + 3000,
        });
      });

      it(`counts every one of ${CONCURRENCY} concurrent increments once`, async () => {
        const stores = harness.sharesState ? [store, await open()] : [store];
        const results = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) => stores[i % stores.length].increment('c', 1, 60_000)),
        );
        const values = results.map((r) => r.value).sort((a, b) => a - b);
        expect(values).toEqual(Array.from({ length: CONCURRENCY }, (_, i) => i + 1));
        expect(new Set(results.map((r) => r.expiresAt)).size).toBe(1);
        await expect(store.get('c')).resolves.toBe(String(CONCURRENCY));
      });

      it('rejects a non-integer step and a key that holds something else', async () => {
        await expect(store.increment('c', 1.5, 1000)).rejects.toThrow(RangeError);
        await expect(store.increment('c', 1.5, 1000)).rejects.toThrow(
          'increment must be a safe integer, got 1.5',
        );
        await expect(store.increment('c', 1, 0)).rejects.toThrow(RangeError);
        await store.set('text', 'not a number', 60_000);
        await expect(store.increment('text', 1, 1000)).rejects.toThrow(TypeError);
        await expect(store.increment('text', 1, 1000)).rejects.toThrow(
          'increment: the key holds a value that is not an integer counter',
        );
        await expect(store.get('text')).resolves.toBe('not a number');
      });

      it('counts a negative counter, and takes digits with anything around them for text', async () => {
        await store.set('negative', '-3', 60_000);
        await expect(store.increment('negative', 1, 1000)).resolves.toMatchObject({ value: -2 });
        for (const text of [' 12', '12 ', '0x10', '1e3', '+5', '4.0', '-', '']) {
          await store.set('text', text, 60_000);
          await expect(store.increment('text', 1, 1000)).rejects.toThrow(TypeError);
          await expect(store.get('text')).resolves.toBe(text);
        }
      });

      it('answers the reads issued together in the order they were issued among the writes', async () => {
        await Promise.all([
          store.set('a', 'a0', 60_000),
          store.set('b', 'b0', 60_000),
          store.set('c', '5', 60_000),
        ]);
        // One tick: reads of keys nothing else in it writes, and reads before and after writes of the same key.
        const answers = await Promise.all([
          store.get('b'),
          store.get('a'),
          store.set('a', 'a1', 60_000),
          store.get('a'),
          store.get('c'),
          store.increment('c', 2, 60_000),
          store.get('c'),
          store.delete('a'),
          store.get('a'),
          store.get('missing'),
          store.get('b'),
        ]);
        expect(answers).toEqual([
          'b0',
          'a0',
          undefined,
          'a1',
          '5',
          { value: 7, expiresAt: expect.any(Number) },
          '7',
          undefined,
          null,
          null,
          'b0',
        ]);
      });

      it('fails alone: the operations issued with an increment of a key that is not a counter all answer', async () => {
        await store.set('text', 'words', 60_000);
        const at = clock.now();
        const [before, counted, failed, claimed, after] = await Promise.allSettled([
          store.increment('before', 2, 1000),
          store.get('text'),
          store.increment('text', 1, 1000),
          store.setIfAbsent('claim', 'mine', 1000),
          store.increment('after', 3, 1000),
        ]);
        expect(before).toEqual({ status: 'fulfilled', value: { value: 2, expiresAt: at + 1000 } });
        expect(counted).toEqual({ status: 'fulfilled', value: 'words' });
        expect(failed.status).toBe('rejected');
        expect((failed as PromiseRejectedResult).reason).toBeInstanceOf(TypeError);
        expect(claimed).toEqual({ status: 'fulfilled', value: true });
        expect(after).toEqual({ status: 'fulfilled', value: { value: 3, expiresAt: at + 1000 } });
        await expect(store.get('text')).resolves.toBe('words');
        await expect(store.get('after')).resolves.toBe('3');
      });
    });

    describe('evictable entries (per-client counters)', () => {
      it('behave like any entry: values, TTLs, set-if-absent and fixed-window counters', async () => {
        const evictable = { evictable: true };
        await store.set('v', 'value', 1000, evictable);
        await expect(store.setIfAbsent('v', 'other', 1000, evictable)).resolves.toBe(false);
        await expect(store.setIfAbsent('once', 'first', 1000, evictable)).resolves.toBe(true);
        const start = clock.now();
        await expect(store.increment('c', 2, 1000, evictable)).resolves.toEqual({
          value: 2,
          expiresAt: start + 1000,
        });
        clock.advance(500);
        await expect(store.increment('c', 1, 9000, evictable)).resolves.toEqual({
          value: 3,
          expiresAt: start + 1000,
        });
        await expect(store.get('v')).resolves.toBe('value');
        await expect(store.get('once')).resolves.toBe('first');
        clock.advance(500);
        await expect(store.get('v')).resolves.toBeNull();
        await expect(store.get('c')).resolves.toBeNull();
      });

      it('can be deleted, and a key keeps one value whichever class its writes name', async () => {
        await store.set('k', 'kept', 60_000);
        await store.increment('k2', 1, 60_000, { evictable: true });
        await store.set('k', 'now evictable', 60_000, { evictable: true });
        await store.increment('k2', 1, 60_000);
        await expect(store.get('k')).resolves.toBe('now evictable');
        await expect(store.get('k2')).resolves.toBe('2');
        await store.delete('k');
        await store.delete('k2');
        await expect(store.get('k')).resolves.toBeNull();
        await expect(store.get('k2')).resolves.toBeNull();
      });

      it('a flood of evictable writes past the bound evicts no kept entry', async () => {
        const bounded = await open(namespace, 10);
        const start = clock.now();
        await bounded.set('session', 'record', 60_000);
        await bounded.setIfAbsent('cooldown', '1', 60_000);
        await bounded.increment('per-phone', 1, 60_000);
        for (let i = 0; i < 100; i++) await bounded.increment(`client:${i}`, 1, 60_000, { evictable: true });
        await expect(bounded.get('session')).resolves.toBe('record');
        await expect(bounded.get('cooldown')).resolves.toBe('1');
        await expect(bounded.increment('per-phone', 1, 60_000)).resolves.toEqual({
          value: 2,
          expiresAt: start + 60_000,
        });
        // The latest per-client counters are still counted.
        await expect(bounded.get('client:99')).resolves.toBe('1');
      });
    });

    describe('due-queue', () => {
      it('hands out nothing before the due time and a member at its due time', async () => {
        const now = clock.now();
        await store.schedule('q', 'm', now + 1000);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual([]);
        clock.advance(999);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual([]);
        clock.advance(1);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual(['m']);
      });

      it('hands out due members earliest first, at most `limit` per call', async () => {
        const now = clock.now();
        await store.schedule('q', 'c', now - 100);
        await store.schedule('q', 'a', now - 300);
        await store.schedule('q', 'later', now + 10_000);
        await store.schedule('q', 'b', now - 200);
        await expect(store.claimDue('q', 2, 5000)).resolves.toEqual(['a', 'b']);
        await expect(store.claimDue('q', 2, 5000)).resolves.toEqual(['c']);
        await expect(store.claimDue('q', 0, 5000)).resolves.toEqual([]);
      });

      it('leases a claimed member: not handed out again until the lease ends', async () => {
        await store.schedule('q', 'm', clock.now());
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual(['m']);
        clock.advance(4999);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual([]);
        clock.advance(1);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual(['m']);
        await expect(store.queueSize('q')).resolves.toBe(1);
      });

      it('moves a member when it is scheduled again', async () => {
        const now = clock.now();
        await store.schedule('q', 'm', now);
        await store.schedule('q', 'm', now + 60_000);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual([]);
        await expect(store.queueSize('q')).resolves.toBe(1);
        await store.schedule('q', 'm', now - 1);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual(['m']);
      });

      it('removes a member with unschedule, and counts members due or not', async () => {
        const now = clock.now();
        await store.schedule('q', 'due', now);
        await store.schedule('q', 'later', now + 60_000);
        await expect(store.queueSize('q')).resolves.toBe(2);
        await store.unschedule('q', 'due');
        await expect(store.unschedule('q', 'never-scheduled')).resolves.toBeUndefined();
        await expect(store.unschedule('no-such-queue', 'm')).resolves.toBeUndefined();
        await expect(store.queueSize('q')).resolves.toBe(1);
        await expect(store.claimDue('q', 10, 5000)).resolves.toEqual([]);
        await expect(store.queueSize('empty')).resolves.toBe(0);
      });

      it('keeps queues apart', async () => {
        await store.schedule('q1', 'm', clock.now());
        await expect(store.claimDue('q2', 10, 5000)).resolves.toEqual([]);
        await expect(store.queueSize('q2')).resolves.toBe(0);
        await expect(store.claimDue('q1', 10, 5000)).resolves.toEqual(['m']);
      });

      it(`hands each due member to exactly one of ${CONCURRENCY} concurrent claimers per lease`, async () => {
        const stores = harness.sharesState ? [store, await open()] : [store];
        const members = Array.from({ length: 20 }, (_, i) => `m${i}`);
        for (const member of members) await store.schedule('q', member, clock.now() - 1);
        const claims = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) => stores[i % stores.length].claimDue('q', 1, 30_000)),
        );
        const handed = claims.flat();
        expect(handed.sort()).toEqual([...members].sort());
        clock.advance(29_999);
        await expect(stores[stores.length - 1].claimDue('q', 100, 30_000)).resolves.toEqual([]);
        clock.advance(1);
        const again = await stores[stores.length - 1].claimDue('q', 100, 30_000);
        expect(again.sort()).toEqual([...members].sort());
      });

      it('rejects a negative limit or lease and a due time that is not finite', async () => {
        await expect(store.claimDue('q', -1, 1000)).rejects.toThrow(RangeError);
        await expect(store.claimDue('q', 1, -1)).rejects.toThrow(RangeError);
        await expect(store.schedule('q', 'm', Number.POSITIVE_INFINITY)).rejects.toThrow(RangeError);
        await expect(store.claimDue('q', -1, 1000)).rejects.toThrow(
          'limit must be a non-negative integer, got -1',
        );
        await expect(store.claimDue('q', 1, -1)).rejects.toThrow(
          'leaseMs must be a non-negative number, got -1',
        );
        await expect(store.schedule('q', 'm', Number.NaN)).rejects.toThrow(
          'dueAt must be a finite number, got NaN',
        );
      });
    });

    describe('batch', () => {
      /** Keys on many cluster slots: no hash tag in common. */
      const spread = (n: number) => Array.from({ length: n }, (_, i) => `batch-${i}-${randomUUID()}`);

      it('answers each operation as its own method does, in order, on keys of any slot', async () => {
        const [a, b, c, d] = spread(4);
        await store.set(a!, 'old', 60_000);
        await store.increment(c!, 5, 60_000);
        const answers = await store.batch!([
          { op: 'get', key: a! },
          { op: 'setIfAbsent', key: a!, value: 'no', ttlMs: 60_000 },
          { op: 'setIfAbsent', key: b!, value: 'yes', ttlMs: 1000 },
          { op: 'increment', key: c!, by: 2, ttlMs: 1 },
          { op: 'increment', key: d!, by: 1, ttlMs: 2000, options: { evictable: true } },
          { op: 'get', key: d! },
          { op: 'set', key: a!, value: 'new', ttlMs: 500 },
          { op: 'delete', key: c! },
        ] as const);
        expect(answers).toEqual([
          'old',
          false,
          true,
          { value: 7, expiresAt: clock.now() + 60_000 },
          { value: 1, expiresAt: clock.now() + 2000 },
          // Operations on one key apply in the batch's order.
          '1',
          undefined,
          undefined,
        ]);
        await expect(store.get(a!)).resolves.toBe('new');
        await expect(store.get(b!)).resolves.toBe('yes');
        await expect(store.get(c!)).resolves.toBeNull();
        await expect(store.get(d!)).resolves.toBe('1');
        // TTLs as the methods set them: at the bound gone, one tick before still there.
        clock.advance(499);
        await expect(store.get(a!)).resolves.toBe('new');
        clock.advance(1);
        await expect(store.get(a!)).resolves.toBeNull();
        clock.advance(499);
        await expect(store.get(b!)).resolves.toBe('yes');
        clock.advance(1);
        await expect(store.get(b!)).resolves.toBeNull();
        await expect(store.increment(d!, 1, 2000)).resolves.toEqual({
          value: 2,
          expiresAt: clock.now() + 1000,
        });
      });

      it('refuses a batch with an unknown operation or a bad argument anywhere in it, and changes nothing', async () => {
        const [a, b] = spread(2);
        await store.set(a!, 'before', 60_000);
        const refused = (last: object) =>
          store.batch!([
            { op: 'set', key: a!, value: 'after', ttlMs: 60_000 },
            { op: 'increment', key: b!, by: 1, ttlMs: 60_000 },
            last as StoreOperation,
          ]);
        await expect(refused({ op: 'drop', key: a! })).rejects.toThrow(
          new TypeError('batch: unknown operation drop'),
        );
        await expect(refused({ op: 'set', key: b!, value: 'x', ttlMs: 0 })).rejects.toThrow(
          new RangeError('ttlMs must be a positive number, got 0'),
        );
        await expect(refused({ op: 'increment', key: b!, by: 0.5, ttlMs: 1000 })).rejects.toThrow(
          new RangeError('increment must be a safe integer, got 0.5'),
        );
        // Every writing operation's TTL is checked, not only set's.
        await expect(refused({ op: 'setIfAbsent', key: b!, value: 'x', ttlMs: -1 })).rejects.toThrow(
          new RangeError('ttlMs must be a positive number, got -1'),
        );
        await expect(refused({ op: 'increment', key: b!, by: 1, ttlMs: 0 })).rejects.toThrow(
          new RangeError('ttlMs must be a positive number, got 0'),
        );
        await expect(store.get(a!)).resolves.toBe('before');
        await expect(store.get(b!)).resolves.toBeNull();
      });

      it('gives each operation after a get or a delete its own arguments (keys of one slot: one call)', async () => {
        const tag = randomUUID();
        const [a, b, c] = ['a', 'b', 'c'].map((name) => `{${tag}}:${name}`);
        await store.set(a!, 'gone', 60_000);
        const answers = await store.batch!([
          { op: 'delete', key: a! },
          { op: 'set', key: b!, value: 'after a delete', ttlMs: 1000 },
          { op: 'get', key: b! },
          { op: 'increment', key: c!, by: 3, ttlMs: 2000 },
        ] as const);
        expect(answers).toEqual([
          undefined,
          undefined,
          'after a delete',
          { value: 3, expiresAt: clock.now() + 2000 },
        ]);
        await expect(store.get(a!)).resolves.toBeNull();
        clock.advance(999);
        await expect(store.get(b!)).resolves.toBe('after a delete');
        clock.advance(1);
        await expect(store.get(b!)).resolves.toBeNull();
      });

      it('an empty batch answers nothing', async () => {
        await expect(store.batch!([])).resolves.toEqual([]);
      });

      it(`counts every increment of ${CONCURRENCY} concurrent batches once, and lets one setIfAbsent win`, async () => {
        const [counter, claim] = spread(2);
        const answers = await Promise.all(
          Array.from({ length: CONCURRENCY }, (_, i) =>
            store.batch!([
              { op: 'increment', key: counter!, by: 1, ttlMs: 60_000 },
              { op: 'setIfAbsent', key: claim!, value: String(i), ttlMs: 60_000 },
            ] as const),
          ),
        );
        expect(answers.map(([counted]) => counted.value).sort((x, y) => x - y)).toEqual(
          Array.from({ length: CONCURRENCY }, (_, i) => i + 1),
        );
        expect(answers.filter(([, won]) => won)).toHaveLength(1);
      });

      it('rejects a bad TTL or step, and a key that is not a counter, like the methods', async () => {
        const [k] = spread(1);
        await expect(store.batch!([{ op: 'set', key: k!, value: 'v', ttlMs: 0 }])).rejects.toThrow(
          RangeError,
        );
        await expect(store.batch!([{ op: 'increment', key: k!, by: 1.5, ttlMs: 1000 }])).rejects.toThrow(
          RangeError,
        );
        await store.set(k!, 'text', 60_000);
        await expect(store.batch!([{ op: 'increment', key: k!, by: 1, ttlMs: 1000 }])).rejects.toThrow(
          /counter/i,
        );
      });

      it('rejects as unavailable once closed', async () => {
        const closing = await open();
        await closing.close();
        await expect(closing.batch!([{ op: 'get', key: 'k' }])).rejects.toThrow(
          VerificationStoreUnavailableError,
        );
      });
    });

    describe('storeBatch: the store as given, and a host store of the same data without batch', () => {
      /** A host's own store: the same data by its single-key methods, no `batch` of its own. */
      const withoutBatch = (of: VerificationStore): VerificationStore => ({
        now: () => of.now(),
        get: (key) => of.get(key),
        set: (key, value, ttlMs, options) => of.set(key, value, ttlMs, options),
        setIfAbsent: (key, value, ttlMs, options) => of.setIfAbsent(key, value, ttlMs, options),
        delete: (key) => of.delete(key),
        increment: (key, by, ttlMs, options) => of.increment(key, by, ttlMs, options),
        schedule: (queue, member, dueAt) => of.schedule(queue, member, dueAt),
        claimDue: (queue, limit, leaseMs) => of.claimDue(queue, limit, leaseMs),
        unschedule: (queue, member) => of.unschedule(queue, member),
        queueSize: (queue) => of.queueSize(queue),
        close: () => of.close(),
      });

      for (const shape of ['as given', 'without batch'] as const) {
        it(`answers each operation as its method does, and writes with its TTL (${shape})`, async () => {
          const host = shape === 'as given' ? store : withoutBatch(store);
          const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
          await store.set(a, 'old', 60_000);
          await store.increment(c, 5, 60_000);
          const answers = await storeBatch(host, [
            { op: 'get', key: a },
            { op: 'setIfAbsent', key: a, value: 'no', ttlMs: 60_000 },
            { op: 'setIfAbsent', key: b, value: 'yes', ttlMs: 1000, options: { evictable: true } },
            { op: 'increment', key: c, by: 2, ttlMs: 1 },
            { op: 'set', key: a, value: 'new', ttlMs: 500 },
            { op: 'delete', key: c },
          ] as const);
          expect(answers).toEqual([
            'old',
            false,
            true,
            { value: 7, expiresAt: clock.now() + 60_000 },
            undefined,
            undefined,
          ]);
          await expect(storeBatch(host, [])).resolves.toEqual([]);
          await expect(store.get(c)).resolves.toBeNull();
          clock.advance(499);
          await expect(store.get(a)).resolves.toBe('new');
          await expect(store.get(b)).resolves.toBe('yes');
          clock.advance(1);
          await expect(store.get(a)).resolves.toBeNull();
          clock.advance(499);
          await expect(store.get(b)).resolves.toBe('yes');
          clock.advance(1);
          await expect(store.get(b)).resolves.toBeNull();
        });
      }
    });

    describe('isolation and sharing', () => {
      it('keeps stores of different namespaces (key prefixes) apart', async () => {
        const other = await open(randomUUID());
        await store.set('k', 'mine', 60_000);
        await store.increment('c', 5, 60_000);
        await store.schedule('q', 'm', clock.now());
        await expect(other.get('k')).resolves.toBeNull();
        await expect(other.setIfAbsent('k', 'theirs', 60_000)).resolves.toBe(true);
        await expect(other.increment('c', 1, 60_000)).resolves.toMatchObject({ value: 1 });
        await expect(other.queueSize('q')).resolves.toBe(0);
        await expect(other.claimDue('q', 10, 1000)).resolves.toEqual([]);
        await expect(store.get('k')).resolves.toBe('mine');
        await expect(store.claimDue('q', 10, 1000)).resolves.toEqual(['m']);
      });

      if (harness.sharesState) {
        it('shares data between two instances on the same namespace', async () => {
          const other = await open();
          await store.set('k', 'v', 1000);
          await expect(other.get('k')).resolves.toBe('v');
          await other.schedule('q', 'm', clock.now());
          await expect(store.queueSize('q')).resolves.toBe(1);
          clock.advance(1000);
          await expect(other.get('k')).resolves.toBeNull();
        });
      }
    });

    describe('close', () => {
      it('can be called twice, and operations afterwards reject as unavailable', async () => {
        const closing = await open();
        await closing.close();
        await expect(closing.close()).resolves.toBeUndefined();
        await expect(closing.get('k')).rejects.toThrow(VerificationStoreUnavailableError);
        await expect(closing.claimDue('q', 1, 1000)).rejects.toThrow(VerificationStoreUnavailableError);
      });

      it('names the operation a closed store refused, as a host’s log shows it', async () => {
        const closing = await open();
        await closing.close();
        const refused = {
          get: () => closing.get('k'),
          set: () => closing.set('k', 'v', 1000),
          setIfAbsent: () => closing.setIfAbsent('k', 'v', 1000),
          delete: () => closing.delete('k'),
          increment: () => closing.increment('k', 1, 1000),
          batch: () => closing.batch!([{ op: 'get', key: 'k' }]),
          schedule: () => closing.schedule('q', 'm', 0),
          claimDue: () => closing.claimDue('q', 1, 1000),
          unschedule: () => closing.unschedule('q', 'm'),
          queueSize: () => closing.queueSize('q'),
          // As RedisStore does: a stream's announcement after shutdown fails rather than vanishing.
          ...(closing.publish ? { publish: () => closing.publish!('c', 'm') } : {}),
          ...(closing.subscribe ? { subscribe: () => closing.subscribe!('c', () => undefined) } : {}),
        };
        for (const [operation, call] of Object.entries(refused))
          await expect(call()).rejects.toThrow(
            `Verification store unavailable: ${operation} failed (the store is closed)`,
          );
      });
    });

    describe('publish / subscribe', () => {
      /**
       * Collects the messages of one channel; `next()` waits (real time: pub/sub has no clock) for one
       * more message than it last returned, `next(count)` for `count` in all. A message delivered
       * before `next()` is called counts: the wait is for what the caller has not seen yet.
       */
      const inbox = async (on: VerificationStore, channel: string) => {
        const received: string[] = [];
        let seen = 0;
        let wake: (() => void) | undefined;
        const unsubscribe = await on.subscribe!(channel, (message) => {
          received.push(message);
          wake?.();
        });
        const next = async (count = seen + 1): Promise<string[]> => {
          const deadline = Date.now() + 3000;
          while (received.length < count && Date.now() < deadline)
            await new Promise<void>((resolve) => {
              wake = resolve;
              setTimeout(resolve, 50);
            });
          seen = received.length;
          return [...received];
        };
        return { received, next, unsubscribe };
      };

      it('delivers a message to every listener of its channel, and to no other channel', async () => {
        const first = await inbox(store, 'status');
        const second = await inbox(store, 'status');
        const other = await inbox(store, 'other');
        await store.publish!('status', 'changed:1');
        await store.publish!('status', 'changed:2');
        // Order is not promised: a Redis Cluster relays each PUBLISH from whichever node took it.
        expect((await first.next(2)).sort()).toEqual(['changed:1', 'changed:2']);
        expect((await second.next(2)).sort()).toEqual(['changed:1', 'changed:2']);
        expect(other.received).toEqual([]);
      });

      it('stops delivering once unsubscribed', async () => {
        const leaving = await inbox(store, 'status');
        const staying = await inbox(store, 'status');
        leaving.unsubscribe();
        await store.publish!('status', 'after');
        expect(await staying.next()).toEqual(['after']);
        expect(leaving.received).toEqual([]);
      });

      it('counts each subscription of one function: subscribed twice it hears a message twice, once after one unsubscribe', async () => {
        const heard: string[] = [];
        const listener = (message: string): void => void heard.push(message);
        const unsubscribe = await store.subscribe!('status', listener);
        await store.subscribe!('status', listener);
        // A listener of its own, subscribed last: once it heard a message, the others had it delivered too.
        const witness = await inbox(store, 'status');
        await store.publish!('status', 'both');
        await witness.next();
        expect(heard).toEqual(['both', 'both']);
        unsubscribe();
        await store.publish!('status', 'one-left');
        await witness.next();
        expect(heard).toEqual(['both', 'both', 'one-left']);
      });

      it('delivers again on a channel its last listener left and a new one joined, while another channel is listened to', async () => {
        const other = await inbox(store, 'other');
        const leaving = await inbox(store, 'status');
        await store.publish!('status', 'before');
        expect(await leaving.next()).toEqual(['before']);
        leaving.unsubscribe();
        const back = await inbox(store, 'status');
        await store.publish!('status', 'after');
        await store.publish!('other', 'still');
        expect(await other.next()).toEqual(['still']);
        expect(await back.next()).toEqual(['after']);
        expect(leaving.received).toEqual(['before']);
      });

      it('an unsubscribe called again, once its channel emptied and a new listener joined, leaves the new one listening', async () => {
        const leaving = await inbox(store, 'status');
        leaving.unsubscribe();
        const back = await inbox(store, 'status');
        // A teardown run twice (a stream's close and its error handler both) calls it a second time.
        leaving.unsubscribe();
        await store.publish!('status', 'after');
        expect(await back.next()).toEqual(['after']);
        expect(leaving.received).toEqual([]);
      });

      it('keeps delivering to the others when a listener throws', async () => {
        await store.subscribe!('status', () => {
          throw new Error('listener failure');
        });
        const healthy = await inbox(store, 'status');
        await store.publish!('status', 'one');
        expect(await healthy.next()).toEqual(['one']);
      });

      if (harness.sharesState) {
        it('reaches a listener on another instance of the same store, never one of another namespace', async () => {
          const other = await open();
          const elsewhere = await open(randomUUID());
          const remote = await inbox(other, 'status');
          const foreign = await inbox(elsewhere, 'status');
          await store.publish!('status', 'from-a');
          expect(await remote.next()).toEqual(['from-a']);
          await elsewhere.publish!('status', 'own');
          expect(await foreign.next()).toEqual(['own']);
        });
      }
    });
  });
}
