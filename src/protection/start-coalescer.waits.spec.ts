import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { MemoryStore } from '../store/memory.store.js';
import { CoalescingClaim, StartCoalescer } from './start-coalescer.js';

/**
 * A duplicate start of another instance waits in real time (another instance's HTTP call): how long it
 * waits, what it learns when it wins the claim after waiting, and the settlements and reports that must
 * not change what identical starts are handed.
 */
const NOW = 1_700_000_000_000;
const KEY = 'protect:coalesce:k';
const CLAIM_TTL_MS = 2000;

const session = (requestId: string) => ({ requestId, expiresAt: NOW + 300_000 });
const cooldownEnd = new Date(NOW + 60_000);

function held(claimed: string | CoalescingClaim): CoalescingClaim {
  expect(claimed).toBeInstanceOf(CoalescingClaim);
  return claimed as CoalescingClaim;
}

/** What a promise has come to so far, without waiting for it. */
function watch<T>(promise: Promise<T>): { outcome?: { value?: T; error?: unknown } } {
  const seen: { outcome?: { value?: T; error?: unknown } } = {};
  promise.then(
    (value) => (seen.outcome = { value }),
    (error: unknown) => (seen.outcome = { error }),
  );
  return seen;
}

describe('StartCoalescer: a duplicate that waits for another instance', () => {
  let store: MemoryStore;
  const instance = () => new StartCoalescer(store, { claimTtlMs: CLAIM_TTL_MS });

  beforeEach(() => {
    jest.useFakeTimers({ now: NOW });
    // The store's clock stands: the first start's claim never runs out while the duplicate waits.
    store = new MemoryStore({ clock: () => NOW });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await store.close();
  });

  it('waits up to the claim’s TTL and a second more for the first start’s session', async () => {
    const first = held(await instance().claim(KEY));
    expect(first.contested).toBe(false);
    const duplicate = watch(instance().claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 900);
    expect(duplicate.outcome).toBeUndefined();
    await first.started(session('req-a'), cooldownEnd);
    await jest.advanceTimersByTimeAsync(100);
    expect(duplicate.outcome).toStrictEqual({ value: 'req-a' });
  });

  it('past that, it is refused start_in_progress, the claim’s TTL as the wait', async () => {
    held(await instance().claim(KEY));
    const duplicate = watch(instance().claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 950);
    expect(duplicate.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(200);
    const refusal = duplicate.outcome?.error as ProtectionRefusal;
    expect(refusal).toBeInstanceOf(ProtectionRefusal);
    expect(refusal.reason).toBe('start_in_progress');
    expect(refusal.retryAfterSeconds).toBe(CLAIM_TTL_MS / 1000);
  });

  it('a duplicate of the same instance waits as long: the claim’s life and a second, then start_in_progress', async () => {
    const coalescer = instance();
    held(await coalescer.claim(KEY));
    const timers = jest.getTimerCount(); // the store's own
    const duplicate = watch(coalescer.claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 999);
    expect(duplicate.outcome).toBeUndefined();
    await jest.advanceTimersByTimeAsync(1);
    const refusal = duplicate.outcome?.error as ProtectionRefusal;
    expect(refusal).toBeInstanceOf(ProtectionRefusal);
    expect(refusal.reason).toBe('start_in_progress');
    expect(refusal.retryAfterSeconds).toBe(CLAIM_TTL_MS / 1000);
    expect(jest.getTimerCount()).toBe(timers);
  });

  it('a duplicate of the same instance answered in time gets the session and leaves no timer behind', async () => {
    const coalescer = instance();
    const first = held(await coalescer.claim(KEY));
    const timers = jest.getTimerCount(); // the store's own
    const duplicate = watch(coalescer.claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 999);
    await first.started(session('req-a'), cooldownEnd);
    await jest.advanceTimersByTimeAsync(0);
    expect(duplicate.outcome).toStrictEqual({ value: 'req-a' });
    expect(jest.getTimerCount()).toBe(timers);
  });

  it('a hung start of the same instance is joined while its claim lives, not from its end: the next identical start claims on its own', async () => {
    const live = new MemoryStore({ clock: () => Date.now() });
    const coalescer = new StartCoalescer(live, { claimTtlMs: CLAIM_TTL_MS });
    const hung = held(await coalescer.claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS - 1);
    const joined = watch(coalescer.claim(KEY));
    await jest.advanceTimersByTimeAsync(1);
    const own = watch(coalescer.claim(KEY));
    await jest.advanceTimersByTimeAsync(0);
    expect(own.outcome?.value).toBeInstanceOf(CoalescingClaim);
    expect(joined.outcome).toBeUndefined();
    // The hung start fails at last: the next identical start still joins the one that took over, and shares its failure.
    await hung.failed(new Error('hung up'));
    const next = watch(coalescer.claim(KEY));
    const failure = new Error('upstream down');
    await held(own.outcome!.value!).failed(failure);
    await jest.advanceTimersByTimeAsync(0);
    expect(next.outcome).toStrictEqual({ error: failure });
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 1000);
    expect(joined.outcome?.error).toBeDefined();
    await live.close();
  });

  it('two duplicates of the same instance waiting at once both get the first start’s session', async () => {
    const coalescer = instance();
    const first = held(await coalescer.claim(KEY));
    const duplicates = [watch(coalescer.claim(KEY)), watch(coalescer.claim(KEY))];
    await jest.advanceTimersByTimeAsync(100);
    await first.started(session('req-a'), cooldownEnd);
    await jest.advanceTimersByTimeAsync(0);
    expect(duplicates.map((d) => d.outcome)).toStrictEqual([{ value: 'req-a' }, { value: 'req-a' }]);
  });

  it('wins the claim when the first start fails, and knows it waited for it', async () => {
    const first = held(await instance().claim(KEY));
    const duplicate = watch(instance().claim(KEY));
    await jest.advanceTimersByTimeAsync(50);
    await first.failed(new Error('upstream down'));
    await jest.advanceTimersByTimeAsync(200);
    expect(held(duplicate.outcome?.value as CoalescingClaim).contested).toBe(true);
  });

  it('a claim that ended between its two reads is claimed again', async () => {
    const setIfAbsent = store.setIfAbsent.bind(store);
    let lost = 1;
    store.setIfAbsent = (...args) => (lost-- > 0 ? Promise.resolve(false) : setIfAbsent(...args));
    const claimed = held(await instance().claim(KEY));
    expect(claimed.contested).toBe(true);
  });
});

describe('StartCoalescer: only the first settlement counts', () => {
  let store: MemoryStore;
  const instance = () => new StartCoalescer(store, { claimTtlMs: CLAIM_TTL_MS });
  beforeEach(() => {
    store = new MemoryStore({ clock: () => NOW });
  });
  afterEach(() => store.close());

  it('a start that failed and then reports a session hands nothing back; one started twice hands back the first', async () => {
    const failed = held(await instance().claim(KEY));
    await failed.failed(new Error('upstream down'));
    await failed.started(session('req-late'), cooldownEnd);
    const next = held(await instance().claim(KEY));
    await next.started(session('req-1'), cooldownEnd);
    await next.started(session('req-2'), cooldownEnd);
    expect(await instance().claim(KEY)).toBe('req-1');
  });

  it('a caller reporting another session ended does not forget the one handed back', async () => {
    await held(await instance().claim(KEY)).started(session('req-1'), cooldownEnd);
    expect(await instance().claim(KEY, 'req-other')).toBe('req-1');
  });

  it('a store that fails at the claim fails that start alone: the next identical start claims', async () => {
    const coalescer = instance();
    const setIfAbsent = store.setIfAbsent.bind(store);
    store.setIfAbsent = () => Promise.reject(new Error('store down'));
    await expect(coalescer.claim(KEY)).rejects.toThrow('store down');
    store.setIfAbsent = setIfAbsent;
    held(await coalescer.claim(KEY));
  });
});
