import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from './session-record.repository.js';
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

describe('SessionRecordRepository: records read again', () => {
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    store = new MemoryStore({ clock: () => 1_700_000_000_000 });
    records = new SessionRecordRepository(
      OPTIONS,
      store,
      telemetryOf(QUIET_LOGGER),
      new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
    );
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
    records = new SessionRecordRepository(
      OPTIONS,
      store,
      telemetryOf(QUIET_LOGGER),
      new SubjectIndex(store, OPTIONS.dataKeys, RECORD_RETENTION_MS),
    );
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
