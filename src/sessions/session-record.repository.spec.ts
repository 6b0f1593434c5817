import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
import { SubjectIndex } from './subject-index.js';
import { spareTestRequestId } from '../core/test-session.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { pendingSession, RECORD_OPTIONS, recordsOn } from '../../test/support/session-records.fixture.js';
import { telemetryOf } from '../../test/support/telemetry.js';

const record = pendingSession({ requestId: 'req-1', phoneNumber: '+79123456789' }, 1_700_000_000_000);

const OPTIONS = RECORD_OPTIONS;
const RECORD_API = {
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
};

/** Before each test of the describe, a MemoryStore at a fixed time and the repository on it (closed after). */
function eachTest(set: (made: { store: MemoryStore; records: SessionRecordRepository }) => void): void {
  let store: MemoryStore | undefined;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    set({ store, records: recordsOn(store) });
  });
  afterEach(() => store?.close());
}

describe('SessionRecordRepository: records read again', () => {
  let records: SessionRecordRepository;
  eachTest((made) => ({ records } = made));

  it('getSince hands back the record it was given while the store holds what that record was read as', async () => {
    await records.save(record);
    const read = (await records.get('req-1'))!;
    expect(read).toStrictEqual(record);
    await expect(records.getSince('req-1', read)).resolves.toBe(read);

    const verified = { ...read, status: 'verified', verifiedAt: 1_700_000_100_000 };
    await records.save(verified);
    const again = await records.getSince('req-1', read);
    expect(again).not.toBe(read);
    expect(again).toStrictEqual(verified);
    // The record just saved is known as what it was saved as.
    await expect(records.getSince('req-1', verified)).resolves.toBe(verified);
  });

  it('getSince reads a record it was not given, and null when the store has none', async () => {
    await expect(records.getSince('req-1', undefined)).resolves.toBeNull();
    await records.save(record);
    await expect(records.getSince('req-1', null)).resolves.toStrictEqual(record);
    await expect(records.getSince('req-1', { ...record })).resolves.toStrictEqual(record);
  });
});

describe('SessionRecordRepository: a spare test session slot holds its newest session only', () => {
  const slot = (tail: string) => spareTestRequestId('pooltag0123456789abcdef', 2, tail);

  it('the session a newer one replaced reads as gone, and its late save never overwrites the newer one', async () => {
    const store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    const records = recordsOn(store);
    const older = { ...record, requestId: slot('aaaaaaa') };
    const newer = { ...record, requestId: slot('bbbbbbb') };
    await records.createAndFollow(older);
    await records.createAndFollow(newer);
    await expect(records.get(older.requestId)).resolves.toBeNull();
    await expect(records.getSince(older.requestId, undefined)).resolves.toBeNull();
    await expect(records.save({ ...older, status: 'verified' })).resolves.toBe(false);
    await expect(records.get(newer.requestId)).resolves.toStrictEqual(newer);
    // A save of the slot's own session is written.
    await expect(records.save({ ...newer, status: 'delivered' })).resolves.toBe(true);
    await expect(records.get(newer.requestId)).resolves.toMatchObject({ status: 'delivered' });
    await store.close();
  });
});

describe('SessionRecordRepository: what a record stores, and records of the previous format', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  eachTest((made) => ({ store, records } = made));
  const stored = async (requestId: string) =>
    JSON.parse((await store.get(SessionRecordRepository.key(requestId)))!) as Record<string, unknown>;

  it('a pending record leaves out its key’s request id and its defaults, and reads back whole', async () => {
    const pending = { ...record, awaitingCode: false, codeLength: 6, cost: { amount: 3, currency: 'RUB' } };
    await records.createAndFollow(pending);
    const fields = await stored('req-1');
    // Each field under its one-letter name (storedRecord): no id (i), awaitingCode (w) or verifiedAt (v).
    for (const name of ['requestId', 'i', 'awaitingCode', 'w', 'verifiedAt', 'v'])
      expect(fields).not.toHaveProperty(name);
    expect(fields).toMatchObject({ m: 'sms', s: 'sent', l: 6, e: pending.expiresAt - pending.createdAt });
    // A fresh repository (another instance) reads it whole.
    const other = recordsOn(store);
    await expect(other.get('req-1')).resolves.toStrictEqual({ ...pending, requestId: 'req-1' });
    const verified = {
      ...pending,
      status: 'verified' as const,
      awaitingCode: true,
      verifiedAt: 1_700_000_100_000,
    };
    await records.save(verified);
    expect(await stored('req-1')).toMatchObject({ w: true, v: 1_700_000_100_000 });
    await expect(other.get('req-1')).resolves.toStrictEqual(verified);
  });

  it('a record sealed under a data key since replaced reads with an empty number and no owner', async () => {
    await records.createAndFollow({ ...record, owner: 'user-1' });
    const rotated = resolveVerificationOptions({ ...RECORD_API, dataKey: 'b'.repeat(43) });
    const read = await recordsOn(store, rotated).get('req-1');
    expect(read).toMatchObject({ requestId: 'req-1', status: 'sent', phoneNumber: '' });
    expect(read?.owner).toBeUndefined();
  });

  it('a record the previous format stored whole (id and defaults written out) reads as it did', async () => {
    const whole = { ...record, awaitingCode: false };
    const raw = JSON.stringify({ ...whole, phoneNumber: OPTIONS.dataKeys.seal(whole.phoneNumber) });
    await store.set(SessionRecordRepository.key('req-1'), raw, 60_000);
    await expect(records.get('req-1')).resolves.toStrictEqual(whole);
    await expect(records.getSince('req-1', undefined)).resolves.toStrictEqual(whole);
  });
});

describe('SessionRecordRepository: announcing a changed session', () => {
  const repositoryOver = (store: MemoryStore, warnings: string[] = []) => {
    const logger = new VerificationLogger({ ...OPTIONS, logLevels: false });
    logger.warn = (message: string) => void warnings.push(message);
    return new SessionRecordRepository(
      OPTIONS,
      store,
      telemetryOf(logger),
      new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
    );
  };

  it('reaches every instance listening on the store, by request id only, until it stops listening', async () => {
    const store = new MemoryStore();
    const [one, other] = [repositoryOver(store), repositoryOver(store)];
    const heard: string[] = [];
    const stop = await other.listen((requestId) => heard.push(requestId));
    await one.announce('req-1');
    stop();
    await one.announce('req-2');
    expect(heard).toStrictEqual(['req-1']);
    await store.close();
  });

  it.each([
    ['publish/subscribe', { publish: undefined, subscribe: undefined }],
    ['subscribe', { subscribe: undefined }],
    ['publish', { publish: undefined }],
  ])(
    'on a host store without %s, reaches the listeners of its own instance only',
    async (_missing, shape) => {
      const store = new MemoryStore();
      const hostStore = Object.assign(Object.create(store) as MemoryStore, shape);
      const [one, other] = [repositoryOver(hostStore), repositoryOver(hostStore)];
      const [own, elsewhere]: string[][] = [[], []];
      await one.listen((requestId) => own.push(requestId));
      await other.listen((requestId) => elsewhere.push(requestId));
      await one.announce('req-1');
      expect(own).toStrictEqual(['req-1']);
      expect(elsewhere).toStrictEqual([]);
      await store.close();
    },
  );

  it('an announcement the store fails to carry is logged, never thrown', async () => {
    const store = new MemoryStore();
    store.publish = () => Promise.reject(new Error('store down'));
    const warnings: string[] = [];
    await expect(repositoryOver(store, warnings).announce('req-1')).resolves.toBeUndefined();
    expect(warnings).toStrictEqual([
      expect.stringMatching(/^could not announce a session change: .*store down/),
    ]);
    await store.close();
  });
});

describe('SessionRecordRepository: each session its own record, journey and erasure', () => {
  let records: SessionRecordRepository;
  eachTest((made) => ({ records } = made));
  const journeyOf = (journeyId: string, phoneNumber: string) => ({
    journeyId,
    phoneNumber,
    steps: [],
    createdAt: record.createdAt,
  });

  it('two sessions and their journeys are read back apart, and erasing one leaves the other', async () => {
    const other = { ...record, requestId: 'req-2', phoneNumber: '+79990001122', owner: 'user-2' };
    await records.createAndFollow(record);
    await records.createAndFollow(other);
    await records.saveJourney(journeyOf('req-1', record.phoneNumber), record.expiresAt);
    await records.saveJourney(journeyOf('req-2', other.phoneNumber), record.expiresAt);
    await expect(records.get('req-1')).resolves.toStrictEqual(record);
    await expect(records.get('req-2')).resolves.toStrictEqual(other);
    await expect(records.getJourney('req-2')).resolves.toMatchObject({ phoneNumber: other.phoneNumber });
    await records.erase('req-1', 60_000);
    await expect(records.get('req-2')).resolves.toStrictEqual(other);
    await expect(records.getJourney('req-2')).resolves.toMatchObject({ journeyId: 'req-2' });
    await expect(records.save({ ...other, status: 'delivered' })).resolves.toBe(true);
  });

  it('a spare test session’s erasure marks it alone, not the newer session of its slot', async () => {
    const slot = (tail: string) => spareTestRequestId('pooltag0123456789abcdef', 2, tail);
    const older = { ...record, requestId: slot('aaaaaaa') };
    const newer = { ...record, requestId: slot('bbbbbbb') };
    await records.createAndFollow(older);
    await records.saveJourney(journeyOf(older.requestId, record.phoneNumber), record.expiresAt);
    await records.erase(older.requestId, 60_000);
    // Erased again once the newer session holds the slot: the newer one stays.
    await records.createAndFollow(newer);
    await records.erase(older.requestId, 60_000);
    await expect(records.get(newer.requestId)).resolves.toStrictEqual(newer);
    await expect(records.isErased(older.requestId)).resolves.toBe(true);
    await expect(records.isErased(newer.requestId)).resolves.toBe(false);
    await expect(records.createAndFollow(newer)).resolves.toBe(true);
    await expect(records.get(newer.requestId)).resolves.toStrictEqual(newer);
    // The slot's journey entry is the newer session's now: the older journey reads as gone.
    await records.saveJourney(journeyOf(newer.requestId, record.phoneNumber), record.expiresAt);
    await expect(records.getJourney(older.requestId)).resolves.toBeNull();
    await expect(records.getJourney(newer.requestId)).resolves.toMatchObject({ journeyId: newer.requestId });
  });
});

describe('SessionRecordRepository: an erased session is gone from the store', () => {
  let records: SessionRecordRepository;
  eachTest((made) => ({ records } = made));
  const journeyOf = (journeyId: string) => ({
    journeyId,
    phoneNumber: record.phoneNumber,
    steps: [],
    createdAt: record.createdAt,
  });

  it('erasing a session removes its record and its journey, and marks it', async () => {
    await records.createAndFollow(record);
    await records.saveJourney(journeyOf('req-1'), record.expiresAt);
    await records.erase('req-1', 60_000);
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.getJourney('req-1')).resolves.toBeNull();
    await expect(records.isErased('req-1')).resolves.toBe(true);
  });

  it('erasing a session whose record has already expired still removes its journey', async () => {
    // A switched journey's record outlives its first session's: the journey carries that session's id.
    await records.saveJourney(journeyOf('req-1'), record.expiresAt);
    await records.erase('req-1', 60_000);
    await expect(records.getJourney('req-1')).resolves.toBeNull();
  });

  it('a spare test session erased while it holds its slot is removed', async () => {
    const own = { ...record, requestId: spareTestRequestId('pooltag0123456789abcdef', 2, 'aaaaaaa') };
    await records.createAndFollow(own);
    await records.erase(own.requestId, 60_000);
    await expect(records.get(own.requestId)).resolves.toBeNull();
  });
});

describe('SessionRecordRepository: a session’s erasure index', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  eachTest((made) => ({ store, records } = made));
  const number = { phoneNumber: record.phoneNumber };

  it('a session stored without a reservation is followed and indexed under its number, with no caller', async () => {
    let now = 1_700_000_000_000;
    const moving = new MemoryStore({ clock: () => now });
    const own = recordsOn(moving);
    await expect(own.createAndFollow(record)).resolves.toBe(true);
    // The reconciler finds it due once its first poll comes.
    now += record.expiresAt - record.createdAt;
    await expect(own.queue.claimDue(10)).resolves.toStrictEqual(['req-1']);
    await expect(own.subjects.take(number)).resolves.toStrictEqual({ ids: ['req-1'], callers: [] });
    await moving.close();
  });

  it('reserves a slot under the number and the owner, and a released reservation gives slot 0 back', async () => {
    const subject = { phoneNumber: record.phoneNumber, owner: 'user-1' };
    const first = await records.reserveIndex(subject);
    expect([...first.slots.values()]).toStrictEqual([
      expect.stringMatching(/:0$/),
      expect.stringMatching(/:0$/),
    ]);
    await records.releaseIndex(first);
    // Not released, slot 0 would hold its gap and the next start would take the day's counter.
    const next = await records.reserveIndex(subject);
    expect([...next.slots.values()]).toStrictEqual([...first.slots.values()]);
  });

  it('a session whose number was erased while the API was asked is removed with its index slot', async () => {
    const reserved = await records.reserveIndex(number);
    await records.subjects.markForgotten(number, store.now(), 60_000);
    await expect(records.createAndFollow({ ...record }, [], undefined, reserved)).resolves.toBe(false);
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.isErased('req-1')).resolves.toBe(true);
    await expect(records.subjects.take(number)).resolves.toStrictEqual({ ids: [], callers: [] });
  });
});
