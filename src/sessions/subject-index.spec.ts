import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { DAY_MS } from '../core/clock.js';
import { DataKeys } from '../core/data-keys.js';
import { subjectTag } from '../core/erasure-marks.js';
import { MAX_SESSION_TTL_MS, type SessionRecord } from '../core/session-record.js';
import { MemoryStore } from '../store/memory.store.js';
import { RECORD_RETENTION_MS } from './session-record.repository.js';
import { SubjectIndex } from './subject-index.js';
import { pendingSession } from '../../test/support/session-records.fixture.js';

let now = 1_700_000_000_000;
const NOW = now;
const keys = new DataKeys(undefined, 'secret-secret-secret');
const session = (requestId: string, owner?: string): SessionRecord =>
  pendingSession({ requestId, phoneNumber: '+79123456789', ...(owner === undefined ? {} : { owner }) }, NOW);

/** What erasure finds of a number's sessions (and its owner's), found once: the index of them goes. */
describe('SubjectIndex: the sessions of a subject, for erasure', () => {
  let store: MemoryStore;
  let index: SubjectIndex;
  beforeEach(() => {
    now = NOW;
    store = new MemoryStore({ clock: () => now });
    index = new SubjectIndex(store, keys, RECORD_RETENTION_MS);
  });
  afterEach(() => store.close());

  it("a subject's only session of the day is one entry; later and concurrent ones are each found", async () => {
    await index.add(session('first', 'alice'), ['browser:b1']);
    // One entry a subject (the number's, the owner's), no counter beside it.
    expect(store.entryCount).toBe(2);
    await Promise.all(['second', 'third', 'fourth'].map((id) => index.add(session(id))));
    const reserved = await index.reserve({ phoneNumber: '+79123456789' });
    await store.set([...reserved.slots.values()][0]!, 'reserved', 60_000);
    // A slot reserved and never written is a gap.
    await index.reserve({ phoneNumber: '+79123456789' });
    const found = await index.take({ phoneNumber: '+79123456789' });
    expect(found.ids.sort()).toStrictEqual(['first', 'fourth', 'reserved', 'second', 'third']);
    expect(found.callers).toStrictEqual(['browser:b1']);
    await expect(index.take({ phoneNumber: '+79123456789' })).resolves.toStrictEqual({
      ids: [],
      callers: [],
    });
    await expect(index.take({ owner: 'alice' })).resolves.toStrictEqual({
      ids: ['first'],
      callers: ['browser:b1'],
    });
    // What stays is the number's day counter, a count (no id), so that no slot key is handed out twice.
    expect(store.entryCount).toBe(1);
    const counter = `${subjectTag(keys, { phoneNumber: '+79123456789' })}:${Math.floor(NOW / DAY_MS)}:n`;
    expect(Number(await store.get(counter))).toBe(5);
  });

  it("concurrent reservations take a slot each (slot 0, the counter's), written with their records", async () => {
    const [first, second] = await Promise.all([
      index.reserve({ phoneNumber: '+79123456789' }),
      index.reserve({ phoneNumber: '+79123456789' }),
    ]);
    const [a, b] = [first, second].map((r) => [...r.slots.values()][0]!);
    expect(a).not.toBe(b);
    for (const [reservation, id] of [
      [first, 'a'],
      [second, 'b'],
    ] as const)
      for (const write of index.writes(session(id), [], reservation)!)
        if (write.op === 'set') await store.set(write.key, write.value, write.ttlMs);
    await expect(index.take({ phoneNumber: '+79123456789' })).resolves.toStrictEqual({
      ids: ['a', 'b'],
      callers: [],
    });
  });

  it("a start that reserved the day's slot 0 and never recorded a session leaves a gap, no session", async () => {
    await index.reserve({ phoneNumber: '+79123456789', owner: 'alice' });
    await index.add(session('later', 'alice'));
    await expect(index.take({ phoneNumber: '+79123456789' })).resolves.toStrictEqual({
      ids: ['later'],
      callers: [],
    });
    await expect(index.take({ owner: 'alice' })).resolves.toStrictEqual({ ids: ['later'], callers: [] });
  });

  it('an index written before slot 0 existed (a counter, slots from 1) is found and removed, a day back too', async () => {
    const tag = subjectTag(keys, { phoneNumber: '+79123456789' });
    const day = Math.floor(NOW / DAY_MS);
    const sealed = keys.seal(JSON.stringify(['client:203.0.113.7', 'browser:b1']));
    await store.increment(`${tag}:${day - 1}:n`, 2, DAY_MS);
    await store.set(`${tag}:${day - 1}:1`, 'old-1', DAY_MS);
    await store.set(`${tag}:${day - 1}:2`, `old-2 ${sealed}`, DAY_MS);
    await index.add(session('new'));
    const found = await index.take({ phoneNumber: '+79123456789' });
    expect(found.ids.sort()).toStrictEqual(['new', 'old-1', 'old-2']);
    expect(found.callers.sort()).toStrictEqual(['browser:b1', 'client:203.0.113.7']);
    expect(store.entryCount).toBe(1);
    expect(Number(await store.get(`${tag}:${day - 1}:n`))).toBe(2);
  });

  it('an erasure leaves the slots of starts in flight, so a start after it never gets one of their keys', async () => {
    const subject = { phoneNumber: '+79123456789' };
    const inFlight = await Promise.all([index.reserve(subject), index.reserve(subject)]);
    const held = inFlight.map((r) => [...r.slots.values()][0]!);
    await expect(index.take(subject)).resolves.toStrictEqual({ ids: [], callers: [] });
    const after = [...(await index.reserve(subject)).slots.values()][0]!;
    expect(held).not.toContain(after);
  });

  it('a slot 0 reserved and never written (the start refused or lost) lives no longer than a written slot could', async () => {
    await index.reserve({ phoneNumber: '+79123456789', owner: 'alice' });
    const kept = MAX_SESSION_TTL_MS + RECORD_RETENTION_MS;
    now = NOW + kept - 1;
    expect(await storeHolds(2)).toBe(true);
    now = NOW + kept;
    expect(await storeHolds(0)).toBe(true);
  });

  it('an erasure finds a session an instance whose clock is ahead indexed under tomorrow', async () => {
    const ahead = new SubjectIndex(aheadBy(store, 1_000), keys, RECORD_RETENTION_MS);
    now = (Math.floor(NOW / DAY_MS) + 1) * DAY_MS - 500;
    await ahead.add(session('ahead'));
    await expect(index.take({ phoneNumber: '+79123456789' })).resolves.toStrictEqual({
      ids: ['ahead'],
      callers: [],
    });
  });

  it('a released reservation leaves nothing, and slot 0 goes to the next start', async () => {
    const subject = { phoneNumber: '+79123456789', owner: 'alice' };
    const refused = await index.reserve(subject);
    await index.release(refused);
    expect(store.entryCount).toBe(0);
    expect([...(await index.reserve(subject)).slots.values()]).toStrictEqual([...refused.slots.values()]);
    // A counter's slot is released without touching the slot 0 another start holds.
    const later = await index.reserve(subject);
    await index.release(later);
    await expect(index.take({ phoneNumber: subject.phoneNumber })).resolves.toStrictEqual({
      ids: [],
      callers: [],
    });
    const day = Math.floor(NOW / DAY_MS);
    expect(await store.get(`${subjectTag(keys, { owner: 'alice' })}:${day}:0`)).toBe('');
  });

  it("a session started late in its day is found until its slot's end, days after the day's counter was taken", async () => {
    const phoneNumber = '+79123456789';
    const day = (Math.floor(NOW / DAY_MS) + 1) * DAY_MS;
    for (const [id, at] of [
      ['first', day + 1_000], // slot 0
      ['second', day + 2_000], // takes the day's counter early in the day
      ['late', day + DAY_MS - 1_000], // the counter's next value at 23:59:59
    ] as const) {
      now = at;
      await index.add(pendingSession({ requestId: id, phoneNumber }, at));
    }
    // Its slot lives as long as its record: its 5 minutes, then the retention, into the second day after.
    now = day + DAY_MS - 1_000 + 300_000 + RECORD_RETENTION_MS - 1;
    await expect(index.take({ phoneNumber })).resolves.toStrictEqual({ ids: ['late'], callers: [] });
  });

  it('a number that leaves an account again, undone (a rebind that failed), leaves it as it left before', async () => {
    const undoFirst = await index.revoke('alice', '+79123456789', NOW, DAY_MS);
    const undo = await index.revoke('alice', '+79123456789', NOW + 60_000, DAY_MS);
    expect(await index.forgottenAt('+79123456789', 'alice')).toBe(NOW + 60_000);
    await undo();
    expect(await index.forgottenAt('+79123456789', 'alice')).toBe(NOW);
    await undoFirst();
    expect(await index.forgottenAt('+79123456789', 'alice')).toBeUndefined();
    // Another owner's mark of the number is not theirs to read.
    await index.revoke('bob', '+79123456789', NOW, DAY_MS);
    expect(await index.forgottenAt('+79123456789', 'alice')).toBeUndefined();
  });

  /** The same store, seen from an instance whose clock is `ms` ahead. */
  function aheadBy(shared: MemoryStore, ms: number): MemoryStore {
    return new Proxy(shared, {
      get: (target, name) => {
        if (name === 'now') return () => target.now() + ms;
        const value: unknown = Reflect.get(target, name, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** Whether the store holds `n` entries now (reading each slot drops it once expired). */
  async function storeHolds(n: number): Promise<boolean> {
    const day = Math.floor(NOW / DAY_MS);
    for (const subject of [{ phoneNumber: '+79123456789' }, { owner: 'alice' }])
      await store.get(`${subjectTag(keys, subject)}:${day}:0`);
    return store.entryCount === n;
  }
});
