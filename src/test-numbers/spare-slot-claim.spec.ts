/**
 * A spare slot is taken atomically (`takeSpareSlot`): starts racing for one slot, on one store shared by
 * instances (MemoryStore in one process, RedisStore across processes), each take a slot of their own;
 * the session each one plays is the one its slot holds, and its right code verifies it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { hostStoreOf } from '../../test/support/host-store.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import { SPARE_TEST_SESSION_SLOTS, spareTestRequestId, storedSessionId } from '../core/test-session.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { spareSlotClaimKey, SPARE_SLOT_CLAIM_MS, takeSpareSlot } from './spare-slot-claim.js';
import { OVERFLOW_TEST_SESSION_SLOT, spareSlotIds, type SlotHolder } from './spare-test-slots.js';
import { KEPT_TEST_SESSIONS_PER_NUMBER_HOUR, TestNumberSessions } from './test-number-sessions.js';

const REVIEWER = '+79990000001';
const CODE = '123456';
const NOW = 1_800_000_000_000;
const options = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
  testNumbers: { numbers: [{ phoneNumber: REVIEWER, code: CODE }] },
});

const stores: VerificationStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

const STORES: [string, () => VerificationStore][] = [
  ['MemoryStore', () => new MemoryStore({ clock: () => NOW })],
  [
    'RedisStore',
    () =>
      new RedisStore({ url: sharedRedisUrl(), clock: () => NOW, keyPrefix: `slot-claim:${randomUUID()}:` }),
  ],
];

describe.each(STORES)('spare starts racing for the slots (%s)', (_name, makeStore) => {
  /** Two instances' sessions on one store, the number's hour of kept sessions already taken. */
  async function twoInstances(): Promise<[TestNumberSessions, TestNumberSessions]> {
    const store = makeStore();
    stores.push(store);
    const one = new TestNumberSessions(options, store);
    for (let n = 0; n < KEPT_TEST_SESSIONS_PER_NUMBER_HOUR; n++)
      await one.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network: `net:kept-${n}` });
    return [one, new TestNumberSessions(options, store)];
  }
  const start = (sessions: TestNumberSessions, network: string) =>
    sessions.initiate({ phoneNumber: REVIEWER, method: 'sms' }, { network });

  it('five concurrent starts on two instances take the five free slots, one each; each verifies', async () => {
    const instances = await twoInstances();
    const started = await Promise.all(
      Array.from({ length: SPARE_TEST_SESSION_SLOTS }, (_, i) => start(instances[i % 2]!, `net:race-${i}`)),
    );
    expect(new Set(started.map((s) => storedSessionId(s.requestId))).size).toBe(SPARE_TEST_SESSION_SLOTS);
    for (const { requestId } of started)
      expect(await instances[0].check({ requestId, code: CODE })).toMatchObject({ status: 'verified' });
  });

  it("two concurrent starts finding every slot held each take another starter's session, never one", async () => {
    const [one, two] = await twoInstances();
    const held = [];
    for (let i = 0; i < SPARE_TEST_SESSION_SLOTS; i++) held.push(await start(one, `net:held-${i}`));
    const racing = await Promise.all([start(one, 'net:race-a'), start(two, 'net:race-b')]);
    for (const { requestId } of racing)
      expect(await two.check({ requestId, code: CODE })).toMatchObject({ status: 'verified' });
    // The two newest strangers' sessions gave way, the three oldest hold their slots.
    const gone = [];
    for (const { requestId } of held)
      gone.push(
        await one.getSession(requestId).then(
          () => false,
          () => true,
        ),
      );
    expect(gone).toStrictEqual([false, false, false, true, true]);
  });
});

describe('takeSpareSlot: the claim', () => {
  const pool = 'pool-digest-of-22-chars';
  const empty = async (): Promise<SlotHolder | null> => null;

  it("a slot whose claim another start holds is passed over; the claim is let go once written, the start's own never kept", async () => {
    const store = new MemoryStore({ clock: () => NOW });
    const [first, second] = spareSlotIds(pool);
    await store.setIfAbsent(spareSlotClaimKey(first!), 'another start', SPARE_SLOT_CLAIM_MS);
    const taken = await takeSpareSlot(store, pool, 'me', empty);
    expect(storedSessionId(taken.requestId)).toBe(second);
    expect(await store.get(spareSlotClaimKey(second!))).not.toBeNull();
    await taken.release?.();
    expect(await store.get(spareSlotClaimKey(second!))).toBeNull();
    // Another start's claim is never let go by this one.
    expect(await store.get(spareSlotClaimKey(first!))).toBe('another start');
    await store.close();
  });

  it('a claim lasts SPARE_SLOT_CLAIM_MS: a crashed start holds its slot no longer', async () => {
    let now = NOW;
    const store = new MemoryStore({ clock: () => now });
    const [first] = spareSlotIds(pool);
    await takeSpareSlot(store, pool, 'crashed', empty);
    now += SPARE_SLOT_CLAIM_MS - 1;
    expect(storedSessionId((await takeSpareSlot(store, pool, 'me', empty)).requestId)).not.toBe(first);
    now += 1;
    expect(storedSessionId((await takeSpareSlot(store, pool, 'me', empty)).requestId)).toBe(first);
    await store.close();
  });

  it('a start slower than its claim lets go only its own: the claim a later start took of its slot stays', async () => {
    let now = NOW;
    const store = new MemoryStore({ clock: () => now });
    const [first] = spareSlotIds(pool);
    const slow = await takeSpareSlot(store, pool, 'slow', empty);
    now += SPARE_SLOT_CLAIM_MS;
    const later = await takeSpareSlot(store, pool, 'later', empty);
    expect(storedSessionId(later.requestId)).toBe(first);
    await slow.release?.();
    // The later start still writes there under its claim: a third start passes the slot over.
    expect(storedSessionId((await takeSpareSlot(store, pool, 'third', empty)).requestId)).not.toBe(first);
    await store.close();
  });

  it('on a host’s store without replaceIfEquals, a start whose claim ends between its read and its delete leaves the claim a later start took meanwhile', async () => {
    let now = NOW;
    const inner = new MemoryStore({ clock: () => now });
    const [first] = spareSlotIds(pool);
    const claimKey = spareSlotClaimKey(first!);
    let later: Promise<unknown> | undefined;
    let racing = false;
    // The slow start's read of its claim: its claim ends, and a later start takes it, before the delete.
    const host = hostStoreOf(inner, {
      afterGet: async (key) => {
        if (key !== claimKey || !racing || later !== undefined) return;
        now += SPARE_SLOT_CLAIM_MS;
        later = takeSpareSlot(inner, pool, 'later', empty);
        await later;
      },
    });
    // Let go in time, by the read and the delete: the slot is free again.
    const quick = await takeSpareSlot(host, pool, 'quick', empty);
    await quick.release?.();
    expect(await inner.get(claimKey)).toBeNull();
    racing = true;
    const slow = await takeSpareSlot(host, pool, 'slow', empty);
    now += SPARE_SLOT_CLAIM_MS - 1000;
    await slow.release?.();
    expect(later).toBeDefined();
    // The later start still writes there under its claim: a third start passes the slot over.
    expect(storedSessionId((await takeSpareSlot(inner, pool, 'third', empty)).requestId)).not.toBe(first);
    await inner.close();
  });

  it('every slot claimed: the overflow, nothing claimed', async () => {
    const store = new MemoryStore({ clock: () => NOW });
    for (const slotId of spareSlotIds(pool))
      await store.setIfAbsent(spareSlotClaimKey(slotId), 'another start', SPARE_SLOT_CLAIM_MS);
    const taken = await takeSpareSlot(store, pool, 'me', empty);
    expect(storedSessionId(taken.requestId)).toBe(spareTestRequestId(pool, OVERFLOW_TEST_SESSION_SLOT, ''));
    expect(taken.release).toBeUndefined();
    await store.close();
  });

  it('a read failing under the claim fails the start with its error and lets the claim go', async () => {
    const store = new MemoryStore({ clock: () => NOW });
    const [first] = spareSlotIds(pool);
    let reads = 0;
    // The first slot reads empty at the choice; its read under the claim fails (the store went away).
    const read = async (slotId: string): Promise<SlotHolder | null> => {
      if (slotId === first && reads++ > 0) throw new Error('store down');
      return null;
    };
    await expect(takeSpareSlot(store, pool, 'me', read)).rejects.toThrow('store down');
    expect(await store.get(spareSlotClaimKey(first!))).toBeNull();
    await store.close();
  });

  it('a slot written since the choice read it (under the claim) is chosen again from what it holds now', async () => {
    const store = new MemoryStore({ clock: () => NOW });
    const [first, second] = spareSlotIds(pool);
    const written: SlotHolder = {
      requestId: `${first!}written`,
      status: 'sent',
      createdAt: NOW,
      expiresAt: NOW + 300_000,
      startedBy: 'another',
    };
    let reads = 0;
    // The first slot reads empty at the choice, then holds another start's session.
    const read = async (slotId: string): Promise<SlotHolder | null> =>
      slotId === first && reads++ > 0 ? written : null;
    const taken = await takeSpareSlot(store, pool, 'me', read);
    expect(storedSessionId(taken.requestId)).toBe(second);
    expect(await store.get(spareSlotClaimKey(first!))).toBeNull();
    await store.close();
  });

  it("a slot that holds another session of the same status under the claim than at the choice is chosen again: another start's fresh session is never taken over", async () => {
    const store = new MemoryStore({ clock: () => NOW });
    const ids = spareSlotIds(pool);
    const held = (slot: number, startedBy: string, createdAt: number, checked = false): SlotHolder => ({
      requestId: `${ids[slot]!}${startedBy}`,
      status: 'sent',
      createdAt,
      expiresAt: NOW + 300_000,
      startedBy,
      ...(checked ? { checked: true } : {}),
    });
    // Every slot held: my two sessions (the first the older), then others' sessions a code was checked for.
    const atChoice = [
      held(0, 'me', NOW - 2),
      held(1, 'me', NOW - 1),
      ...[2, 3, 4].map((slot) => held(slot, `o${slot}`, NOW - 9, true)),
    ];
    // Between the choice and the claim another start played its fresh session (sent, as mine was) in my oldest slot.
    const fresh = held(0, 'another', NOW);
    let firstReads = 0;
    const read = async (slotId: string): Promise<SlotHolder | null> => {
      const slot = ids.indexOf(slotId);
      return slot === 0 && firstReads++ > 0 ? fresh : atChoice[slot]!;
    };
    const taken = await takeSpareSlot(store, pool, 'me', read);
    expect(storedSessionId(taken.requestId)).toBe(ids[1]);
    expect(taken.replaced).toBe(false);
    expect(await store.get(spareSlotClaimKey(ids[0]!))).toBeNull();
    await store.close();
  });
});
