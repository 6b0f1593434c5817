import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { StartCoalescer } from './start-coalescer.js';
import type { ProtectedStart, StartedSession } from './verification-protection.types.js';

const NOW = 1_700_000_000_000;
const KEY = 'protect:coalesce:k';

const session = (requestId: string, expiresAt = NOW + 300_000): StartedSession => ({ requestId, expiresAt });
const started = (
  result: StartedSession,
  resendInMs: number | null = 60_000,
): ProtectedStart<StartedSession> => ({
  result,
  coalesced: false,
  resendAvailableAt: resendInMs === null ? null : new Date(NOW + resendInMs),
});

/** A start whose outcome the test decides when it likes. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
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

  /** The callbacks of one start, counting what they were asked. */
  function callbacks(outcome: () => Promise<ProtectedStart<StartedSession>>, resumable = true) {
    const calls = { fresh: 0, resumed: [] as string[], handedBack: 0 };
    return {
      calls,
      fresh: () => {
        calls.fresh++;
        return outcome();
      },
      resume: async (requestId: string) => {
        calls.resumed.push(requestId);
        return resumable ? session(requestId) : null;
      },
      handBack: async (result: StartedSession) => {
        calls.handedBack++;
        return { result, coalesced: true, resendAvailableAt: null };
      },
    };
  }

  it('identical concurrent starts in one process share one initiation', async () => {
    const coalescer = new StartCoalescer(newStore(), { claimTtlMs: 10_000 });
    const first = deferred<ProtectedStart<StartedSession>>();
    const cb = callbacks(() => first.promise);
    const a = coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    const b = coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    first.resolve(started(session('req-1')));
    expect(await a).toEqual(started(session('req-1')));
    expect(await b).toEqual({ ...started(session('req-1')), coalesced: true });
    expect(cb.calls.fresh).toBe(1);
  });

  it("a later start gets the pending session back until the first start's resend cooldown ends", async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    const cb = callbacks(async () => started(session('req-1'), 60_000));
    await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    clock.now += 59_999;
    expect(await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack)).toMatchObject({
      result: { requestId: 'req-1' },
      coalesced: true,
    });
    expect(cb.calls).toEqual({ fresh: 1, resumed: ['req-1'], handedBack: 1 });
    // The cooldown is over: a start now is a deliberate resend.
    clock.now += 1;
    await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    expect(cb.calls.fresh).toBe(2);
  });

  it('hands a session back until its cooldown ends or it expires, whichever comes first', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    // Expires before its cooldown ends: handed back only until it expires.
    const short = callbacks(async () => started(session('req-1', NOW + 30_000), 60_000));
    await coalescer.run(KEY, short.fresh, short.resume, short.handBack);
    clock.now += 30_000;
    await coalescer.run(KEY, short.fresh, short.resume, short.handBack);
    expect(short.calls).toMatchObject({ fresh: 2, resumed: [] });

    // No cooldown running: the session's expiry bounds it.
    clock.now = NOW;
    const noCooldown = callbacks(async () => started(session('req-2', NOW + 30_000), null));
    await coalescer.run('other', noCooldown.fresh, noCooldown.resume, noCooldown.handBack);
    expect(await store.get('other')).toBe('session:req-2');

    // Already over: nothing is kept.
    const over = callbacks(async () => started(session('req-3', NOW), null));
    await coalescer.run('third', over.fresh, over.resume, over.handBack);
    expect(await store.get('third')).toBeNull();
  });

  it('a session that can no longer be resumed is forgotten, and the start goes ahead on its own', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    const cb = callbacks(async () => started(session(`req-${cb.calls.fresh}`)), false);
    await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    const second = await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack);
    expect(cb.calls).toEqual({ fresh: 2, resumed: ['req-1'], handedBack: 0 });
    expect(second.result.requestId).toBe('req-2');
    expect(await store.get(KEY)).toBe('session:req-2');
  });

  it('a failed start removes its claim: the next start tries on its own', async () => {
    const store = newStore();
    const coalescer = new StartCoalescer(store, { claimTtlMs: 10_000 });
    const failing = callbacks(() => Promise.reject(new Error('upstream down')));
    await expect(coalescer.run(KEY, failing.fresh, failing.resume, failing.handBack)).rejects.toThrow(
      'upstream down',
    );
    expect(await store.get(KEY)).toBeNull();
    const cb = callbacks(async () => started(session('req-2')));
    expect((await coalescer.run(KEY, cb.fresh, cb.resume, cb.handBack)).coalesced).toBe(false);
  });

  it("another instance's duplicate waits for the first start's session and resumes it", async () => {
    const store = newStore();
    const first = deferred<ProtectedStart<StartedSession>>();
    const a = callbacks(() => first.promise);
    const b = callbacks(async () => started(session('req-b')));
    const running = new StartCoalescer(store, { claimTtlMs: 10_000 }).run(KEY, a.fresh, a.resume, a.handBack);
    const duplicate = new StartCoalescer(store, { claimTtlMs: 10_000 }).run(
      KEY,
      b.fresh,
      b.resume,
      b.handBack,
    );
    first.resolve(started(session('req-a')));
    await running;
    expect(await duplicate).toMatchObject({ result: { requestId: 'req-a' }, coalesced: true });
    expect(b.calls).toEqual({ fresh: 0, resumed: ['req-a'], handedBack: 1 });
  });

  it('a started session is served even when the store cannot remember it', async () => {
    const store = newStore();
    store.set = () => Promise.reject(new Error('store down'));
    const cb = callbacks(async () => started(session('req-1')));
    expect(
      await new StartCoalescer(store, { claimTtlMs: 10_000 }).run(KEY, cb.fresh, cb.resume, cb.handBack),
    ).toEqual(started(session('req-1')));
  });
});
