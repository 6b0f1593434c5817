/**
 * Attack (StartCoalescer, 3539f6ac + 651550fd: an identical start of the same instance waits for the first
 * start's outcome at most the claim's life and a second). The first start's holder never settles (a host's
 * hook that hangs). Its claim in the store ends with its life: another instance's identical start then claims
 * the key and starts. But on the holder's instance the flight never leaves the process's map: the duplicate is
 * refused start_in_progress with Retry-After the claim's life, and its retry after that wait, and every retry
 * after it, joins the same flight and is refused again, until the process restarts. The user of that instance
 * can never start again (another instance's user can), and each retry adds waiters to a promise that never
 * settles (memory grows with the retries).
 *
 * Expected: once the claim's life is over, a start of the holder's instance tries on its own, as one of another
 * instance does (it wins the claim).
 */
import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { CoalescingClaim, StartCoalescer } from '../../src/protection/start-coalescer.js';

const NOW = 1_700_000_000_000;
const KEY = 'protect:coalesce:hung';
const CLAIM_TTL_MS = 2000;

/** What a promise has come to so far, without waiting for it. */
function watch<T>(promise: Promise<T>): { outcome?: { value?: T; error?: unknown } } {
  const seen: { outcome?: { value?: T; error?: unknown } } = {};
  promise.then(
    (value) => (seen.outcome = { value }),
    (error: unknown) => (seen.outcome = { error }),
  );
  return seen;
}

describe('attack: a first start whose holder never settles, retried on its own instance', () => {
  let store: MemoryStore;
  const settings = { claimTtlMs: CLAIM_TTL_MS };

  beforeEach(() => {
    jest.useFakeTimers({ now: NOW });
    // The store runs on the same (fake) clock: the claim ends with its life.
    store = new MemoryStore({ clock: () => Date.now() });
  });
  afterEach(async () => {
    jest.useRealTimers();
    await store.close();
  });

  it('after the claim’s life and the Retry-After, the retry on the holder’s instance may start, as another instance’s does', async () => {
    const a = new StartCoalescer(store, settings);
    const hung = await a.claim(KEY);
    expect(hung).toBeInstanceOf(CoalescingClaim); // never settled
    const duplicate = watch(a.claim(KEY));
    await jest.advanceTimersByTimeAsync(CLAIM_TTL_MS + 1000);
    const refusal = duplicate.outcome?.error as ProtectionRefusal;
    expect(refusal).toBeInstanceOf(ProtectionRefusal);
    expect(refusal.reason).toBe('start_in_progress');
    // The user waits as told.
    await jest.advanceTimersByTimeAsync(refusal.retryAfterSeconds! * 1000);

    // Another instance's identical start claims the ended key at once.
    const other = watch(new StartCoalescer(store, settings).claim(KEY));
    await jest.advanceTimersByTimeAsync(50);
    expect(other.outcome?.value).toBeInstanceOf(CoalescingClaim);
    await (other.outcome!.value as CoalescingClaim).failed(new Error('the other start failed'));

    // The holder's instance: its retry is let through too (it may claim), not held on the hung flight.
    const retry = watch(a.claim(KEY));
    await jest.advanceTimersByTimeAsync(100);
    expect(retry.outcome?.error).toBeUndefined();
    expect(retry.outcome?.value).toBeInstanceOf(CoalescingClaim);
  });
});
