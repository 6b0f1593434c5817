import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import type { VerificationSession } from '../api/api.types.js';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import type { VerificationEvent } from '../core/verification-events.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { hostStoreOf } from '../../test/support/host-store.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import { observedSms, pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';

/**
 * A host's listener that takes its time, on a live instance: its instance keeps the event's claim while the
 * listener runs (renewed every third of the 60 s lease, real time), so no other instance emits the event
 * meanwhile, however often it looks; for 15 minutes at most, after which a listener that never returns
 * lets another instance emit it a lease later. On the store's clock and jest's fake timers together.
 */
const START = 1_700_000_000_000;
/** The lease and the longest hold, written out: a test that read the constants would follow a unit slip. */
const LEASE_MS = 60_000;
const HOLD_MAX_MS = 15 * 60_000;

const pending = pendingSms(START, { owner: 'user-7' });
const verified = (): VerificationSession => observedSms(START, 'verified');

const stores: [string, (clock: () => number) => VerificationStore][] = [
  ['MemoryStore', (clock) => new MemoryStore({ clock })],
  ['a host store without replaceIfEquals', (clock) => hostStoreOf(new MemoryStore({ clock }))],
];

describe.each(stores)('an emission whose listener is slow, on a live instance (%s)', (_, storeOf) => {
  let now: number;
  let store: VerificationStore;
  let received: VerificationEvent[];

  beforeEach(() => {
    jest.useFakeTimers({ now: START });
    now = START;
    store = storeOf(() => now);
    received = [];
  });
  afterEach(async () => {
    jest.useRealTimers();
    await store.close?.();
  });

  /** Time passes for the store and for the instance's timers alike, a second at a time. */
  async function pass(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= 1000) {
      const step = Math.min(1000, left);
      now += step;
      await jest.advanceTimersByTimeAsync(step);
    }
  }

  function instance() {
    const made = trackerOver(store as MemoryStore, () => now);
    made.emitter.onAny((_event, payload) => void received.push(payload as VerificationEvent));
    return made;
  }

  /** The first instance observes the verified session; its listener runs until `finish` is called. */
  async function slowListener() {
    const slow = instance();
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => (finish = resolve));
    let called!: () => void;
    const listening = new Promise<void>((resolve) => (called = resolve));
    slow.emitter.on('verification.verified', async () => {
      called();
      await finished;
    });
    await slow.records.save(pending);
    const observing = slow.tracker.observe(verified(), 'webhook');
    await listening;
    return { slow, finish, observing };
  }

  it('a listener 5 minutes long: another instance, looking every 30 s, emits nothing; then the event is done', async () => {
    const { finish, observing } = await slowListener();
    const other = instance();
    const record = (await other.records.get('req-1'))!;
    for (let look = 0; look < 10; look++) {
      await pass(30_000);
      await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
        emitted: [],
        settled: false,
      });
    }
    await pass(LEASE_MS);
    finish();
    await observing;
    await pass(LEASE_MS);
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: true,
    });
    expect(received.map((e) => e.event)).toStrictEqual(['verification.verified']);
  });

  it('a listener 90 s long that then fails gives the renewed claim back at once: another instance emits the event', async () => {
    const slow = instance();
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    let called!: () => void;
    const listening = new Promise<void>((resolve) => (called = resolve));
    slow.emitter.on('verification.verified', async () => {
      called();
      await failing;
      throw new TypeError('the CRM is down');
    });
    await slow.records.save(pending);
    const observing = slow.tracker.observe(verified(), 'webhook');
    observing.catch(() => undefined);
    await listening;
    await pass(90_000);
    fail();
    await expect(observing).rejects.toThrow('will be delivered again');
    const other = instance();
    const record = (await other.records.get('req-1'))!;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: ['verification.verified'],
      settled: true,
    });
  });

  it('an instance that dies after a renewal loses the claim a lease after that renewal, not at the hold’s end', async () => {
    await slowListener();
    const other = instance();
    const record = (await other.records.get('req-1'))!;
    // One renewal (20 s in), then the instance's timers stop: it died with its listener running.
    await pass(LEASE_MS / 3);
    now += LEASE_MS - 1;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({ emitted: [] });
    now += 1;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({
      emitted: ['verification.verified'],
    });
  });

  it('a listener that never returns holds its event 15 minutes at most: then another instance emits it', async () => {
    await slowListener();
    const other = instance();
    const record = (await other.records.get('req-1'))!;
    // The last renewal lands at the hold's end: the claim lasts until then, and no longer.
    await pass(HOLD_MAX_MS - 1000);
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({ emitted: [] });
    now += 999;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({ emitted: [] });
    now += 1;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({
      emitted: ['verification.verified'],
    });
    expect(received.map((e) => e.event)).toStrictEqual(['verification.verified', 'verification.verified']);
  });
});

/**
 * Two instances over `store`; the first observes the verified session and its listener runs until `finish`
 * (resolved once the listener has been called). `received`: the events both emitted.
 */
async function twoInstances(store: VerificationStore, clock: () => number) {
  const received: string[] = [];
  const [slow, other] = [trackerOver(store as never, clock), trackerOver(store as never, clock)];
  for (const made of [slow, other]) made.emitter.onAny((event) => void received.push(String(event)));
  let finish!: () => void;
  const finished = new Promise<void>((resolve) => (finish = resolve));
  let called!: () => void;
  const listening = new Promise<void>((resolve) => (called = resolve));
  slow.emitter.on('verification.verified', async () => (called(), await finished));
  await slow.records.save(pending);
  const observing = slow.tracker.observe(verified(), 'webhook');
  await listening;
  return { received, other, finish, observing };
}

describe('an emission whose listener ends while a renewal is under way (a host store without replaceIfEquals)', () => {
  afterEach(() => void jest.useRealTimers());

  it('the event is marked done after the renewal has landed: nobody emits it again a lease later', async () => {
    jest.useFakeTimers({ now: START });
    let now = START;
    const inner = new MemoryStore({ clock: () => now });
    let paused: Promise<void> | undefined;
    // The renewal reads the claim (its token), then waits here before it writes: the listener ends meanwhile.
    const store = hostStoreOf(inner, {
      afterGet: async (key) => {
        if (paused && key.startsWith('event:')) await paused;
      },
    });
    const { received, other, finish, observing } = await twoInstances(store, () => now);
    let resume!: () => void;
    paused = new Promise<void>((resolve) => (resume = resolve));
    // The first renewal (a third of the lease in) reads the claim and waits.
    now += LEASE_MS / 3;
    await jest.advanceTimersByTimeAsync(LEASE_MS / 3);
    finish();
    // The listener's end goes through: an instance that did not wait for its renewal would mark the event done now.
    for (let tick = 0; tick < 20; tick++) await jest.advanceTimersByTimeAsync(0);
    paused = undefined;
    resume();
    // The renewal lands, still within its lease.
    for (let tick = 0; tick < 20; tick++) await jest.advanceTimersByTimeAsync(0);
    await observing;
    now += 2 * LEASE_MS;
    await jest.advanceTimersByTimeAsync(2 * LEASE_MS);
    const record = (await other.records.get('req-1'))!;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: true,
    });
    expect(received).toStrictEqual(['verification.verified']);
    await inner.close();
  });
});

describe('an emission whose listener is slow, on RedisStore (two instances, one Redis)', () => {
  it('another instance emits nothing while the first one’s listener runs past the lease', async () => {
    jest.useFakeTimers({ now: START, doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    let now = START;
    const store = new RedisStore({
      url: sharedRedisUrl(),
      keyPrefix: `pv-test:slow-listener:${process.pid}:${Date.now()}:`,
      clock: () => now,
    });
    try {
      const { received, other, finish, observing } = await twoInstances(store, () => now);
      const record = (await other.records.get('req-1'))!;
      for (let second = 0; second < 3 * LEASE_MS; second += 1000) {
        now += 1000;
        await jest.advanceTimersByTimeAsync(1000);
      }
      await expect(other.tracker.emitDue(record, 'poll')).resolves.toMatchObject({ emitted: [] });
      finish();
      await observing;
      expect(received).toStrictEqual(['verification.verified']);
    } finally {
      jest.useRealTimers();
      await store.close();
    }
  });
});
