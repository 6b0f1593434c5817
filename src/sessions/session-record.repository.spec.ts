import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
  STEP_CLAIM_TTL_MS,
} from './session-record.repository.js';
import { SubjectIndex } from './subject-index.js';
import type { SessionRecord } from '../core/session-record.js';
import { spareTestRequestId } from '../core/test-session.js';
import { telemetryOf } from '../../test/support/telemetry.js';

const record: SessionRecord = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'sent',
  awaitingCode: true,
  createdAt: 1_700_000_000_000,
  expiresAt: 1_700_000_300_000,
  verifiedAt: null,
};

/** The repository logs only a failed change announcement; nothing here is meant to. */
const OPTIONS = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
});
const QUIET_LOGGER = new VerificationLogger({ ...OPTIONS, logLevels: false });

/** A repository over `store`, as the module makes it. */
const repositoryOn = (store: MemoryStore) =>
  new SessionRecordRepository(
    OPTIONS,
    store,
    telemetryOf(QUIET_LOGGER),
    new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
  );

describe('SessionRecordRepository: records read again', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    records = repositoryOn(store);
  });
  afterEach(() => store.close());

  it('getSince hands back the record it was given while the store holds what that record was read as', async () => {
    await records.save(record);
    const read = (await records.get('req-1'))!;
    expect(read).toEqual(record);
    await expect(records.getSince('req-1', read)).resolves.toBe(read);

    const verified = { ...read, status: 'verified', verifiedAt: 1_700_000_100_000 };
    await records.save(verified);
    const again = await records.getSince('req-1', read);
    expect(again).not.toBe(read);
    expect(again).toEqual(verified);
    // The record just saved is known as what it was saved as.
    await expect(records.getSince('req-1', verified)).resolves.toBe(verified);
  });

  it('getSince reads a record it was not given, and null when the store has none', async () => {
    await expect(records.getSince('req-1', undefined)).resolves.toBeNull();
    await records.save(record);
    await expect(records.getSince('req-1', null)).resolves.toEqual(record);
    await expect(records.getSince('req-1', { ...record })).resolves.toEqual(record);
  });
});

describe('SessionRecordRepository: a spare test session slot holds its newest session only', () => {
  const slot = (tail: string) => spareTestRequestId('pooltag0123456789abcdef', 2, tail);

  it('the session a newer one replaced reads as gone, and its late save never overwrites the newer one', async () => {
    const store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    const records = new SessionRecordRepository(
      OPTIONS,
      store,
      telemetryOf(QUIET_LOGGER),
      new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
    );
    const older = { ...record, requestId: slot('aaaaaaa') };
    const newer = { ...record, requestId: slot('bbbbbbb') };
    await records.createAndFollow(older);
    await records.createAndFollow(newer);
    await expect(records.get(older.requestId)).resolves.toBeNull();
    await expect(records.getSince(older.requestId, undefined)).resolves.toBeNull();
    await expect(records.save({ ...older, status: 'verified' })).resolves.toBe(false);
    await expect(records.get(newer.requestId)).resolves.toEqual(newer);
    // A save of the slot's own session is written.
    await expect(records.save({ ...newer, status: 'delivered' })).resolves.toBe(true);
    await expect(records.get(newer.requestId)).resolves.toMatchObject({ status: 'delivered' });
    await store.close();
  });
});

describe('SessionRecordRepository: what a record stores, and records of the previous format', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    records = repositoryOn(store);
  });
  afterEach(() => store.close());
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
    const other = new SessionRecordRepository(
      OPTIONS,
      store,
      telemetryOf(QUIET_LOGGER),
      new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
    );
    await expect(other.get('req-1')).resolves.toStrictEqual({ ...pending, requestId: 'req-1' });
    const verified = {
      ...pending,
      status: 'verified' as const,
      awaitingCode: true,
      verifiedAt: 1_700_000_100_000,
    };
    await records.save(verified);
    expect(await stored('req-1')).toMatchObject({ w: true, v: 1_700_000_100_000 });
    await expect(other.get('req-1')).resolves.toEqual(verified);
  });

  it('a record the previous format stored whole (id and defaults written out) reads as it did', async () => {
    const whole = { ...record, awaitingCode: false };
    const raw = JSON.stringify({ ...whole, phoneNumber: OPTIONS.dataKeys.seal(whole.phoneNumber) });
    await store.set(SessionRecordRepository.key('req-1'), raw, 60_000);
    await expect(records.get('req-1')).resolves.toStrictEqual(whole);
    await expect(records.getSince('req-1', undefined)).resolves.toStrictEqual(whole);
  });
});

describe('SessionRecordRepository: how long records, journeys, step claims and erasure marks last', () => {
  let now: number;
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    now = 1_700_000_000_000;
    store = new MemoryStore({ clock: () => now });
    records = repositoryOn(store);
  });
  afterEach(() => store.close());
  const journey = {
    journeyId: 'req-1',
    phoneNumber: record.phoneNumber,
    steps: [],
    createdAt: record.createdAt,
  };

  it('a record and its journey are read until their session’s end plus the retention, and gone at it', async () => {
    // Saved 100 s into a session of 300 s: kept 200 s + 24 h from now.
    now += 100_000;
    await records.createAndFollow(record);
    await records.saveJourney(journey, record.expiresAt);
    now = record.expiresAt + RECORD_RETENTION_MS - 1;
    await expect(records.get('req-1')).resolves.toEqual(record);
    await expect(records.getJourney('req-1')).resolves.toMatchObject({ journeyId: 'req-1' });
    now += 1;
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.getJourney('req-1')).resolves.toBeNull();
  });

  it('a record saved after its session ended is kept to the retention after the end, as its index slots', async () => {
    now = record.expiresAt + 50_000;
    await expect(records.save(record)).resolves.toBe(true);
    await expect(records.saveJourneyIfAbsent({ ...journey }, record.expiresAt)).resolves.toBe(true);
    await expect(records.saveJourneyIfAbsent({ ...journey, createdAt: 1 }, record.expiresAt)).resolves.toBe(
      false,
    );
    now = record.expiresAt + RECORD_RETENTION_MS - 1;
    await expect(records.get('req-1')).resolves.toEqual(record);
    await expect(records.getJourney('req-1')).resolves.toMatchObject({ createdAt: journey.createdAt });
    now += 1;
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.getJourney('req-1')).resolves.toBeNull();
  });

  it('a record saved past its retention (a session rebuilt from the API) is kept the retention from then', async () => {
    now = record.expiresAt + RECORD_RETENTION_MS + 1;
    await expect(records.saveIfAbsent(record)).resolves.toBe(true);
    now += RECORD_RETENTION_MS - 1;
    await expect(records.get('req-1')).resolves.toEqual(record);
    now += 1;
    await expect(records.get('req-1')).resolves.toBeNull();
  });

  it('a step is claimed once until its claim lapses; only its holder gives it back', async () => {
    const first = await records.claimStep('req-1', 1);
    expect(first).not.toBeNull();
    await expect(records.claimStep('req-1', 1)).resolves.toBeNull();
    // Another step of the journey, and the same step of another journey, are claims of their own.
    await expect(records.claimStep('req-1', 2)).resolves.not.toBeNull();
    await expect(records.claimStep('req-2', 1)).resolves.not.toBeNull();
    now += STEP_CLAIM_TTL_MS - 1;
    await expect(records.claimStep('req-1', 1)).resolves.toBeNull();
    now += 1;
    const second = await records.claimStep('req-1', 1);
    expect(second).not.toBeNull();
    // The lapsed holder's give-back leaves the new holder's claim alone; the holder's frees the step.
    await records.releaseStep(first!);
    await expect(records.claimStep('req-1', 1)).resolves.toBeNull();
    await records.releaseStep(second!);
    await expect(records.claimStep('req-1', 1)).resolves.not.toBeNull();
  });

  it('an erased session is not written again while its mark is kept, and is once it lapsed', async () => {
    await records.createAndFollow(record);
    await records.saveJourney(journey, record.expiresAt);
    await records.erase('req-1', 10_000);
    await expect(records.isErased('req-1')).resolves.toBe(true);
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.getJourney('req-1')).resolves.toBeNull();
    // A late save and a rebuilt record are undone; another session is not touched by the mark.
    await expect(records.save(record)).resolves.toBe(false);
    await expect(records.saveIfAbsent(record)).resolves.toBe(false);
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.saveIfAbsent({ ...record, requestId: 'req-2' })).resolves.toBe(true);
    await expect(records.saveIfAbsent({ ...record, requestId: 'req-2' })).resolves.toBe(false);
    now += 10_000 - 1;
    await expect(records.isErased('req-1')).resolves.toBe(true);
    await expect(records.save(record)).resolves.toBe(false);
    now += 1;
    await expect(records.isErased('req-1')).resolves.toBe(false);
    await expect(records.save(record)).resolves.toBe(true);
    await expect(records.get('req-1')).resolves.toEqual(record);
  });

  it('a first write that lands after its erasure answers false and keeps the mark as long as the record would be', async () => {
    await records.erase('req-1', 10_000);
    await expect(records.createAndFollow(record)).resolves.toBe(false);
    await expect(records.get('req-1')).resolves.toBeNull();
    now = record.expiresAt + RECORD_RETENTION_MS - 1;
    await expect(records.isErased('req-1')).resolves.toBe(true);
    now += 1;
    await expect(records.isErased('req-1')).resolves.toBe(false);
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
    expect(heard).toEqual(['req-1']);
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
      expect(own).toEqual(['req-1']);
      expect(elsewhere).toEqual([]);
      await store.close();
    },
  );

  it('an announcement the store fails to carry is logged, never thrown', async () => {
    const store = new MemoryStore();
    store.publish = () => Promise.reject(new Error('store down'));
    const warnings: string[] = [];
    await expect(repositoryOver(store, warnings).announce('req-1')).resolves.toBeUndefined();
    expect(warnings).toEqual([expect.stringMatching(/^could not announce a session change: .*store down/)]);
    await store.close();
  });
});

describe('SessionRecordRepository: each session its own record, journey and erasure', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    records = repositoryOn(store);
  });
  afterEach(() => store.close());
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
    await expect(records.get(newer.requestId)).resolves.toEqual(newer);
    await expect(records.isErased(older.requestId)).resolves.toBe(true);
    await expect(records.isErased(newer.requestId)).resolves.toBe(false);
    await expect(records.createAndFollow(newer)).resolves.toBe(true);
    await expect(records.get(newer.requestId)).resolves.toEqual(newer);
    // The slot's journey entry is the newer session's now: the older journey reads as gone.
    await records.saveJourney(journeyOf(newer.requestId, record.phoneNumber), record.expiresAt);
    await expect(records.getJourney(older.requestId)).resolves.toBeNull();
    await expect(records.getJourney(newer.requestId)).resolves.toMatchObject({ journeyId: newer.requestId });
  });
});
