import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import {
  RECORD_RETENTION_MS,
  SessionRecordRepository,
  STEP_CLAIM_TTL_MS,
} from './session-record.repository.js';
import { hostStoreOf } from '../../test/support/host-store.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { pendingSession, RECORD_OPTIONS, recordsOn } from '../../test/support/session-records.fixture.js';

const record = pendingSession({ requestId: 'req-1', phoneNumber: '+79123456789' }, 1_700_000_000_000);

describe('SessionRecordRepository: how long records, journeys, step claims and erasure marks last', () => {
  let now: number;
  let store: MemoryStore;
  let records: SessionRecordRepository;
  beforeEach(() => {
    now = 1_700_000_000_000;
    store = new MemoryStore({ clock: () => now });
    records = recordsOn(store);
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
    await expect(records.get('req-1')).resolves.toStrictEqual(record);
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
    await expect(records.get('req-1')).resolves.toStrictEqual(record);
    await expect(records.getJourney('req-1')).resolves.toMatchObject({ createdAt: journey.createdAt });
    now += 1;
    await expect(records.get('req-1')).resolves.toBeNull();
    await expect(records.getJourney('req-1')).resolves.toBeNull();
    // Saved past that (a session rebuilt from the API): the retention from then.
    await expect(records.saveIfAbsent(record)).resolves.toBe(true);
    now += RECORD_RETENTION_MS - 1;
    await expect(records.get('req-1')).resolves.toStrictEqual(record);
    now += 1;
    await expect(records.get('req-1')).resolves.toBeNull();
  });

  it('an erasure finds a session recorded at its start for as long as its record is kept: its index slots live its end plus the retention', async () => {
    const owned = { ...record, owner: 'alice' };
    await records.createAndFollow(owned, [], undefined, await records.reserveIndex(owned));
    // The last tick the record is kept (300 s of session after the 24 h a slot of the retention alone would live).
    now = record.expiresAt + RECORD_RETENTION_MS - 1;
    await expect(records.get('req-1')).resolves.toStrictEqual(owned);
    await expect(records.subjects.take({ phoneNumber: owned.phoneNumber })).resolves.toMatchObject({
      ids: ['req-1'],
    });
    await expect(records.subjects.take({ owner: 'alice' })).resolves.toMatchObject({ ids: ['req-1'] });
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

  it('with an API timeout longer than the step claim’s minute, the claim outlives the paid start’s POST by half a minute', async () => {
    const slowApi = resolveVerificationOptions({
      api: { ...RECORD_OPTIONS.api, timeoutMs: 120_000, maxRetries: 0 },
    });
    const slow = recordsOn(store, slowApi);
    const first = await slow.claimStep('req-1', 1);
    expect(first).not.toBeNull();
    // A second switch while the first's POST may still land (within its 120 s timeout): turned away.
    now += 150_000 - 1;
    await expect(slow.claimStep('req-1', 1)).resolves.toBeNull();
    now += 1;
    await expect(slow.claimStep('req-1', 1)).resolves.not.toBeNull();
  });

  it('with retries, the claim also outlives a POST retried after a refused connection: the retry deadline, the timeout and half a minute', async () => {
    // The default 2 retries within 10 s: the last attempt may begin 10 s in and take its 120 s.
    const slowApi = resolveVerificationOptions({ api: { ...RECORD_OPTIONS.api, timeoutMs: 120_000 } });
    const slow = recordsOn(store, slowApi);
    await expect(slow.claimStep('req-1', 1)).resolves.not.toBeNull();
    now += 160_000 - 1;
    await expect(slow.claimStep('req-1', 1)).resolves.toBeNull();
    now += 1;
    await expect(slow.claimStep('req-1', 1)).resolves.not.toBeNull();
  });

  it('on a host’s store without replaceIfEquals, a holder whose claim lapses between its read and its delete leaves the next holder’s claim', async () => {
    const claimKey = SessionRecordRepository.stepClaimKey('req-1', 1);
    let next: unknown;
    let racing = false;
    const host = recordsOn(
      hostStoreOf(store, {
        // Between the lapsed holder's read and its delete, its claim ends and another switch takes the step.
        afterGet: async (key) => {
          if (key !== claimKey || !racing || next !== undefined) return;
          now += STEP_CLAIM_TTL_MS;
          next = await host.claimStep('req-1', 1);
        },
      }),
    );
    // Given back in time, by the read and the delete: the step is free again.
    await host.releaseStep((await host.claimStep('req-1', 1))!);
    const first = await host.claimStep('req-1', 1);
    expect(first).not.toBeNull();
    racing = true;
    now += STEP_CLAIM_TTL_MS - 1000;
    await host.releaseStep(first!);
    expect(next).not.toBeNull();
    await expect(host.claimStep('req-1', 1)).resolves.toBeNull();
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
    await expect(records.get('req-1')).resolves.toStrictEqual(record);
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
