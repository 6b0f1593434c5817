import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { CoalescingClaim, StartCoalescer } from './start-coalescer.js';
import type { StartedSession } from './verification-protection.types.js';

const NOW = 1_700_000_000_000;
const KEY = 'protect:coalesce:k';

const session = (requestId: string, expiresAt = NOW + 300_000): StartedSession => ({ requestId, expiresAt });
const inMs = (ms: number | null) => (ms === null ? null : new Date(NOW + ms));

/** The claim a start expects to hold (fails the test when it was handed a request id instead). */
function held(claimed: string | CoalescingClaim): CoalescingClaim {
  expect(claimed).toBeInstanceOf(CoalescingClaim);
  return claimed as CoalescingClaim;
}

describe('StartCoalescer', () => {
  const clock = { now: NOW };
  const stores: MemoryStore[] = [];
  const newStore = () => {
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    clock.now = NOW;
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it('identical concurrent starts in one process wait for the first one and get its session', async () => {
    const coalescer = new StartCoalescer(newStore(), { claimTtlMs: 10_000 });
    const first = held(await coalescer.claim(KEY));
    const duplicate = coalescer.claim(KEY);
    await first.started(session('req-1'), inMs(60_000));
    expect(await duplicate).toBe('req-1');
  });

  it('identical concurrent starts in one process share the first one failure', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    const first = held(await coalescer.claim(KEY));
    const duplicate = coalescer.claim(KEY);
    const failure = new Error('upstream down');
    await first.failed(failure);
    await expect(duplicate).rejects.toBe(failure);
    // The claim is removed: the next start tries on its own.
    expect(await store.get(KEY)).toBeNull();
    held(await coalescer.claim(KEY));
  });

  it("a later start gets the pending session back until the first start's resend cooldown ends", async () => {
    const coalescer = new StartCoalescer(newStore(), { claimTtlMs: 10_000 });
    await held(await coalescer.claim(KEY)).started(session('req-1'), inMs(60_000));
    clock.now += 59_999;
    expect(await coalescer.claim(KEY)).toBe('req-1');
    // The cooldown is over: a start now is a deliberate resend.
    clock.now += 1;
    held(await coalescer.claim(KEY));
  });

  it('hands a session back until its cooldown ends or it expires, whichever comes first', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    // Expires before its cooldown ends: handed back only until it expires.
    await held(await coalescer.claim(KEY)).started(session('req-1', NOW + 30_000), inMs(60_000));
    clock.now += 30_000;
    held(await coalescer.claim(KEY));

    // No cooldown running: the session's expiry bounds it.
    clock.now = NOW;
    await held(await coalescer.claim('other')).started(session('req-2', NOW + 30_000), null);
    expect(await store.get('other')).toBe('session:req-2');

    // Already over: nothing is kept.
    await held(await coalescer.claim('third')).started(session('req-3', NOW), null);
    expect(await store.get('third')).toBeNull();
  });

  it('a handed-back session the caller found ended is forgotten, and the start goes ahead on its own', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    await held(await coalescer.claim(KEY)).started(session('req-1'), inMs(60_000));
    expect(await coalescer.claim(KEY)).toBe('req-1');
    const second = held(await coalescer.claim(KEY, 'req-1'));
    await second.started(session('req-2'), inMs(60_000));
    expect(await store.get(KEY)).toBe('session:req-2');
  });

  it('settling twice counts once', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    const claim = held(await coalescer.claim(KEY));
    await claim.started(session('req-1'), inMs(60_000));
    await claim.failed(new Error('late'));
    expect(await store.get(KEY)).toBe('session:req-1');
  });

  it("another instance's duplicate waits for the first start's session and is handed it", async () => {
    const store = newStore();
    const first = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    const duplicate = new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY);
    await first.started(session('req-a'), inMs(60_000));
    expect(await duplicate).toBe('req-a');
  });

  it("another instance's duplicate claims on its own when the first start fails", async () => {
    const store = newStore();
    const first = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    const duplicate = new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY);
    await first.failed(new Error('upstream down'));
    held(await duplicate);
  });

  it('a started session is served even when the store cannot remember it', async () => {
    const store = newStore();
    const claim = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    const down = () => Promise.reject(new Error('store down'));
    Object.assign(store, { set: down, setIfAbsent: down, replaceIfEquals: down, get: down, delete: down });
    await expect(claim.started(session('req-1'), inMs(60_000))).resolves.toBeUndefined();
  });

  it("a start that outlived its claim leaves the next holder's claim in place: a third start waits for that one's session", async () => {
    const store = newStore();
    const late = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    clock.now += 10_000;
    const next = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    await late.started(session('req-late'), inMs(60_000));
    const third = new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY);
    // It polls the claim in real time (another instance's HTTP call); 50 ms of it is several polls.
    const waiting = new Promise((resolve) => setTimeout(() => resolve('still waiting'), 50));
    expect(await Promise.race([third, waiting])).toBe('still waiting');
    await next.started(session('req-next'), inMs(60_000));
    expect(await third).toBe('req-next');
  });

  it("a start that outlived its claim and failed does not remove the next holder's claim", async () => {
    const store = newStore();
    const late = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    clock.now += 10_000;
    const next = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    await late.failed(new Error('upstream down'));
    const third = new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY);
    await next.started(session('req-next'), inMs(60_000));
    expect(await third).toBe('req-next');
  });

  it('a start that outlived its claim, the key free, still hands its session back', async () => {
    const store = newStore();
    const late = held(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY));
    clock.now += 10_000;
    await late.started(session('req-late'), inMs(60_000));
    expect(await new StartCoalescer(store, { claimTtlMs: 10_000 }).claim(KEY)).toBe('req-late');
  });
});
