/**
 * What the spend cap gives back on the API's word (spend-evidence.ts): a session that ended without a
 * seen delivery stays counted (unproven) until the day's `GET /v1/usage` says it was not charged; a
 * charge the module never saw is added. On a MemoryStore and a fixed clock, read as the cap reads it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { ProtectionKeys } from './protection-keys.js';
import { SpendCounter, SpendEvidence, type ChargedOn } from './spend-evidence.js';

const DAY = 86_400_000;
const WINDOW = '2026-01-01';
const STARTS = Date.UTC(2026, 0, 1);
const TTL = DAY;
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/** A cap's counter and its evidence; `charged`: what the API says it charged that day (a function, or a failure). */
function day(charged: number | (() => Promise<number>), window = { windowMs: DAY, utcOffsetMinutes: 0 }) {
  let now = STARTS + 10 * 3_600_000;
  const store = new MemoryStore({ clock: () => now });
  stores.push(store);
  const dates: string[] = [];
  const usage: ChargedOn = {
    read: async (date) => {
      dates.push(date);
      return { chargedMinor: typeof charged === 'number' ? charged : await charged() };
    },
  };
  const counter = new SpendCounter(
    store,
    { keyPrefix: 'protect:spend', points: 1_000_000, windowMs: DAY },
    undefined,
  );
  const evidence = new SpendEvidence(store, usage, window);
  const count = async (): Promise<number> => Number(await store.get(counter.storeKey(WINDOW))) || 0;
  const unproven = async (): Promise<number> =>
    Number(await store.get(ProtectionKeys.spendUnproven(WINDOW))) || 0;
  return {
    store,
    counter,
    evidence,
    count,
    unproven,
    dates,
    /** `minor` reserved and counted, every session of it ended without a seen delivery (unproven). */
    unseen: async (minor: number): Promise<void> => {
      await counter.charge(WINDOW, minor);
      await evidence.opened(WINDOW, minor, TTL);
      await evidence.ended(WINDOW, minor, TTL, true);
    },
    reconcile: () => evidence.reconcile(counter, WINDOW, STARTS, TTL),
    advance: (ms: number) => (now += ms),
  };
}

describe('SpendEvidence.reconcile', () => {
  it('gives back what the API did not charge of the unproven sessions, once, and asks usage for the window’s UTC date', async () => {
    const d = day(100);
    // Three SMS reserved at 100 each; one delivered and charged (seen), two ended unseen.
    await d.counter.charge(WINDOW, 300);
    await d.evidence.opened(WINDOW, 300, TTL);
    await d.evidence.ended(WINDOW, 100, TTL, false);
    await d.evidence.ended(WINDOW, 200, TTL, true);
    expect(await d.unproven()).toBe(200);
    expect(await d.reconcile()).toBe(true);
    expect(d.dates).toStrictEqual(['2026-01-01']);
    expect(await d.count()).toBe(100);
    expect(await d.unproven()).toBe(0);
    // Nothing more to give back, however often asked.
    d.advance(30_000);
    expect(await d.reconcile()).toBe(false);
    expect(await d.count()).toBe(100);
  });

  it('never gives back what is still live (a session in flight is not yet in the API’s usage)', async () => {
    const d = day(0);
    await d.counter.charge(WINDOW, 300);
    await d.evidence.opened(WINDOW, 300, TTL);
    await d.evidence.ended(WINDOW, 100, TTL, true);
    // 200 live, 100 unproven, the API charged nothing: 100 comes back.
    expect(await d.reconcile()).toBe(true);
    expect(await d.count()).toBe(200);
    expect(await d.unproven()).toBe(0);
  });

  it('gives back at most the unproven total, even when the API charged less than the rest', async () => {
    const d = day(0);
    await d.counter.charge(WINDOW, 500);
    await d.evidence.opened(WINDOW, 100, TTL);
    await d.evidence.ended(WINDOW, 100, TTL, true);
    expect(await d.reconcile()).toBe(true);
    expect(await d.count()).toBe(400);
  });

  it('adds what the API charged above the counter (proofs the module never saw), and gives nothing back then', async () => {
    const d = day(450);
    await d.unseen(300);
    expect(await d.reconcile()).toBe(false);
    expect(await d.count()).toBe(450);
    expect(await d.unproven()).toBe(300);
  });

  it('a charge equal to the counter changes nothing', async () => {
    const d = day(300);
    await d.unseen(300);
    expect(await d.reconcile()).toBe(false);
    expect(await d.count()).toBe(300);
    expect(await d.unproven()).toBe(300);
  });

  it('reads usage at most once per 30 s across instances: at 29.999 s not again, at 30 s again', async () => {
    let charged = 300;
    const d = day(async () => charged);
    const other = new SpendEvidence(
      d.store,
      { read: async () => ({ chargedMinor: charged }) },
      { windowMs: DAY, utcOffsetMinutes: 0 },
    );
    await d.unseen(300);
    expect(await d.reconcile()).toBe(false);
    charged = 0;
    d.advance(29_999);
    expect(await other.reconcile(d.counter, WINDOW, STARTS, TTL)).toBe(false);
    expect(await d.count()).toBe(300);
    d.advance(1);
    expect(await other.reconcile(d.counter, WINDOW, STARTS, TTL)).toBe(true);
    expect(await d.count()).toBe(0);
  });

  it('two registrations pooling one counter (one store): each gives back only what its own account did not charge', async () => {
    const d = day(0);
    const registration = (scope: string, charged: number) => {
      const usage: ChargedOn = { read: async () => ({ chargedMinor: charged }) };
      const evidence = new SpendEvidence(d.store, usage, { windowMs: DAY, utcOffsetMinutes: 0 }, scope);
      const counter = new SpendCounter(
        d.store,
        { keyPrefix: 'protect:spend', points: 1_000, windowMs: DAY },
        scope,
      );
      return { evidence, counter, reconcile: () => evidence.reconcile(counter, WINDOW, STARTS, TTL) };
    };
    // South's 300 ended unseen and its account charged them; north's account charged nothing.
    const north = registration('north', 0);
    const south = registration('south', 300);
    await south.counter.charge(WINDOW, 300);
    await south.evidence.opened(WINDOW, 300, TTL);
    await south.evidence.ended(WINDOW, 300, TTL, true);
    expect(await north.reconcile()).toBe(false);
    expect(await south.reconcile()).toBe(false);
    expect(await d.count()).toBe(300);
    // North's own 200 unseen, not charged by its account: those come back, south's stay.
    await north.counter.charge(WINDOW, 200);
    await north.evidence.opened(WINDOW, 200, TTL);
    await north.evidence.ended(WINDOW, 200, TTL, true);
    d.advance(30_000);
    expect(await north.reconcile()).toBe(true);
    expect(await d.count()).toBe(300);
  });

  it('a failed usage read changes nothing (the safe side)', async () => {
    const d = day(async () => {
      throw new Error('503');
    });
    await d.unseen(300);
    expect(await d.reconcile()).toBe(false);
    expect(await d.count()).toBe(300);
    expect(await d.unproven()).toBe(300);
  });

  it.each([
    ['a window that is not one day', { windowMs: DAY / 2, utcOffsetMinutes: 0 }],
    ['a day that is not the UTC date', { windowMs: DAY, utcOffsetMinutes: 180 }],
  ])('gives nothing back for %s (usage is per UTC date), and never reads it', async (_, window) => {
    const d = day(0, window);
    await d.unseen(300);
    expect(await d.reconcile()).toBe(false);
    expect(d.dates).toStrictEqual([]);
    expect(await d.count()).toBe(300);
  });

  it('without the API’s usage, nothing comes back before the window ends', async () => {
    const store = new MemoryStore({ clock: () => STARTS });
    stores.push(store);
    const counter = new SpendCounter(
      store,
      { keyPrefix: 'protect:spend', points: 1_000, windowMs: DAY },
      undefined,
    );
    const evidence = new SpendEvidence(store, undefined, { windowMs: DAY, utcOffsetMinutes: 0 });
    await counter.charge(WINDOW, 300);
    await evidence.ended(WINDOW, 300, TTL, true);
    expect(await evidence.reconcile(counter, WINDOW, STARTS, TTL)).toBe(false);
    expect(Number(await store.get(counter.storeKey(WINDOW)))).toBe(300);
  });
});

describe('SpendEvidence: live and proved', () => {
  it('a reservation of 0 writes nothing; a negative one takes back from what is live', async () => {
    const d = day(0);
    await d.evidence.opened(WINDOW, 0, TTL);
    expect(await d.store.get(ProtectionKeys.spendLive(WINDOW))).toBeNull();
    await d.evidence.opened(WINDOW, 300, TTL);
    await d.evidence.opened(WINDOW, -100, TTL);
    expect(Number(await d.store.get(ProtectionKeys.spendLive(WINDOW)))).toBe(200);
  });

  it('a proof is its callers’ share of the reserve, each; nothing for a proof of 0 or less', async () => {
    const d = day(0);
    await d.evidence.proved(WINDOW, ['a', 'b'], 30, TTL);
    await d.evidence.proved(WINDOW, ['a'], 20, TTL);
    await d.evidence.proved(WINDOW, ['a'], 0, TTL);
    await d.evidence.proved(WINDOW, ['a'], -50, TTL);
    expect(await d.evidence.callerSpent(WINDOW, 'a')).toBe(50);
    expect(await d.evidence.callerSpent(WINDOW, 'b')).toBe(30);
    expect(await d.evidence.callerSpent(WINDOW, 'c')).toBe(0);
  });

  it('a caller’s share is written evictable (anyone can make one per caller): a flood of callers evicts them, never the cap', async () => {
    const store = new MemoryStore({ clock: () => STARTS, maxEntries: 50 });
    stores.push(store);
    const evidence = new SpendEvidence(store, undefined, { windowMs: DAY, utcOffsetMinutes: 0 });
    const counter = new SpendCounter(
      store,
      { keyPrefix: 'protect:spend', points: 1_000, windowMs: DAY },
      undefined,
    );
    await counter.charge(WINDOW, 300);
    for (let i = 0; i < 200; i++) await evidence.proved(WINDOW, [`caller-${i}`], 10, TTL);
    expect(Number(await store.get(counter.storeKey(WINDOW)))).toBe(300);
  });
});
