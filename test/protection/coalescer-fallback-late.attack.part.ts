/**
 * Attack (atk-221): a host's store WITHOUT `replaceIfEquals` (optional in VerificationStore). The coalescer's
 * `keep`/`drop` then fall back to store-replace.ts: a read, then a write. A start whose claim is about to end
 * (a hook or upstream call that took about api.timeoutMs + 10 s) reads its own claim a millisecond before the
 * claim's end; the claim ends, another instance's identical start claims the key, and only then does the late
 * start's write land: it overwrites (keep) or removes (drop) the other start's claim. The late start knows the
 * claim's age (its flight's start) and could have refrained (setIfAbsent only), but does not.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../../src/store/memory.store.js';
import { CoalescingClaim, StartCoalescer } from '../../src/protection/start-coalescer.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { hostStoreOf } from '../support/host-store.js';

const NOW = 1_700_000_000_000;
const KEY = 'protect:coalesce:attack';
const TTL = 10_000;

function held(claimed: string | CoalescingClaim): CoalescingClaim {
  expect(claimed).toBeInstanceOf(CoalescingClaim);
  return claimed as CoalescingClaim;
}

describe('attack: coalescing claim on a host store without replaceIfEquals', () => {
  const clock = { now: NOW };
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    clock.now = NOW;
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  /** A memory store as a host's store without replaceIfEquals; `onRead` runs once, after the next get's read. */
  function hostStore(): { store: VerificationStore; onNextRead(hook: () => Promise<void>): void } {
    const memory = new MemoryStore({ clock: () => clock.now });
    stores.push(memory);
    let hook: (() => Promise<void>) | undefined;
    // The reply travels back while the claim ends and another instance's SET NX lands first.
    const store = hostStoreOf(memory, {
      afterGet: async () => {
        const run = hook;
        hook = undefined;
        if (run) await run();
      },
    });
    return { store, onNextRead: (h) => (hook = h) };
  }

  const waitingFor = (claim: Promise<string | CoalescingClaim>) =>
    Promise.race([claim, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 50))]);

  it("keep: a late start's session does not overwrite the claim another start took at the claim's end", async () => {
    const { store, onNextRead } = hostStore();
    const late = held(await new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY));
    clock.now = NOW + TTL - 1; // the late start settles 1 ms before its claim ends
    let next: CoalescingClaim | undefined;
    onNextRead(async () => {
      clock.now = NOW + TTL;
      next = held(await new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY));
    });
    await late.started({ requestId: 'req-late', expiresAt: NOW + 300_000 }, new Date(NOW + 60_000));
    expect(next).toBeDefined();
    // `next` holds the claim and pays for its own session: a third identical start must wait for it.
    expect(await waitingFor(new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY))).toBe('still waiting');
    await next!.started({ requestId: 'req-next', expiresAt: NOW + 300_000 }, new Date(NOW + 70_000));
  });

  it("drop: a late start's failure does not remove the claim another start took at the claim's end", async () => {
    const { store, onNextRead } = hostStore();
    const late = held(await new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY));
    clock.now = NOW + TTL - 1;
    let next: CoalescingClaim | undefined;
    onNextRead(async () => {
      clock.now = NOW + TTL;
      next = held(await new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY));
    });
    await late.failed(new Error('upstream down'));
    expect(next).toBeDefined();
    // A third start claiming here would be a second paid start next to `next`'s.
    const third = await waitingFor(new StartCoalescer(store, { claimTtlMs: TTL }).claim(KEY));
    if (third instanceof CoalescingClaim) await third.failed(new Error('cleanup'));
    expect(third instanceof CoalescingClaim ? 'a claim of its own: a second paid start' : third).toBe(
      'still waiting',
    );
    await next!.started({ requestId: 'req-next', expiresAt: NOW + 300_000 }, new Date(NOW + 70_000));
  });
});
