import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { VerificationSession } from '../api/api.types.js';
import { MemoryStore } from '../store/memory.store.js';
import { RECORD_RETENTION_MS, type SessionRecordRepository } from './session-record.repository.js';
import type { VerificationEvent } from '../core/verification-events.js';
import { VerificationTracker } from './verification.tracker.js';
import { telemetryOf } from '../../test/support/telemetry.js';
import { observedSms, pendingSms, trackerOver } from '../../test/support/tracker.fixture.js';

/**
 * What a host's listeners receive: each event's payload, the journey's one `verified`, the lease that
 * frees an event whose emitter died, and a failing listener's event coming again.
 */
const START = 1_700_000_000_000;

const pending = pendingSms(START, { owner: 'user-7', cost: { amount: 3, currency: 'RUB' } });

function observed(
  status: VerificationSession['status'],
  fields: Partial<VerificationSession> = {},
): VerificationSession {
  return observedSms(START, status, fields);
}

describe('VerificationTracker: what the host’s listeners receive', () => {
  let now: number;
  let store: MemoryStore;
  let warnings: { message: string; fields: unknown }[];
  let received: VerificationEvent[];

  /** One instance of the module over the shared store: its records, its tracker, its emitter. */
  function instance(name?: string) {
    const made = trackerOver(store, () => now, { name });
    made.logger.warn = (message: string, fields?: unknown) => void warnings.push({ message, fields });
    made.emitter.onAny((_event, payload) => void received.push(payload as VerificationEvent));
    return made;
  }

  /** A journey of an SMS (`req-1`, 3 RUB) and a flash call it switched to (`req-2`, 5 RUB), both pending. */
  async function twoStepJourney(records: SessionRecordRepository): Promise<void> {
    const second = {
      ...pending,
      requestId: 'req-2',
      method: 'flash_call' as const,
      journeyId: 'req-1',
      cost: { amount: 5, currency: 'RUB' },
    };
    await records.save(pending);
    await records.save(second);
    await records.saveJourney(
      {
        journeyId: 'req-1',
        phoneNumber: pending.phoneNumber,
        steps: [
          { requestId: 'req-1', method: 'sms', startedAt: START },
          { requestId: 'req-2', method: 'flash_call', startedAt: START + 10 },
        ],
        createdAt: START,
      },
      pending.expiresAt,
    );
  }

  beforeEach(() => {
    now = START;
    store = new MemoryStore({ clock: () => now });
    warnings = [];
    received = [];
  });
  afterEach(() => store.close());

  it('a verified session’s event: its facts, its journey’s, the handle its owner holds, and no test mark', async () => {
    const { records, tracker, codec } = instance();
    const assessment = { decision: 'grade' as const, reason: 'new_device' };
    await records.save({ ...pending, purpose: 'login', assessment });
    now += 1000;
    await tracker.observe(observed('verified', { verifiedAt: new Date(START + 900) }), 'check');
    expect(received).toHaveLength(1);
    const event = received[0]!;
    expect(event).toStrictEqual({
      event: 'verification.verified',
      verificationId: event.verificationId,
      requestId: 'req-1',
      phoneNumber: '+79123456789',
      method: 'sms',
      status: 'verified',
      verifiedAt: new Date(START + 900),
      expiresAt: new Date(START + 300_000),
      owner: 'user-7',
      purpose: 'login',
      assessment: { decision: 'grade', reason: 'new_device' },
      source: 'check',
      methodsTried: ['sms'],
      journeyCost: { amount: 3, currency: 'RUB' },
    });
    expect(codec.open(event.verificationId, 'user-7')).toBe('req-1');
  });

  it('a failed session without purpose or assessment, under a named registration', async () => {
    const { records, tracker } = instance('shop');
    await records.save({ ...pending, owner: undefined, cost: undefined });
    await tracker.observe(observed('failed'), 'webhook');
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({
      event: 'verification.failed',
      verifiedAt: null,
      registration: 'shop',
      source: 'webhook',
    });
    expect(received[0]).not.toHaveProperty('purpose');
    expect(received[0]).not.toHaveProperty('assessment');
    expect(received[0]).not.toHaveProperty('test');
  });

  it('operator_id’s announced fallback: code_required first, then the outcome, each once', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, method: 'operator_id', awaitingCode: false });
    const asOperatorId = (status: VerificationSession['status'], awaitingCode: boolean) =>
      observed(status, { method: 'operator_id', awaitingCode });
    await tracker.observe(asOperatorId('sent', false), 'poll');
    expect(received).toStrictEqual([]);
    await tracker.observe(asOperatorId('sent', true), 'poll');
    await tracker.observe(asOperatorId('sent', true), 'poll');
    await tracker.observe(asOperatorId('verified', true), 'webhook');
    expect(received.map((e) => e.event)).toStrictEqual([
      'verification.code_required',
      'verification.verified',
    ]);
    // Verified without the API's time: the moment the module first saw it.
    expect(received[1]!.verifiedAt).toStrictEqual(new Date(START));
  });

  it('a journey is verified once: its second verified step is verified_again, with the journey’s methods and cost', async () => {
    const { records, tracker } = instance();
    await twoStepJourney(records);
    await tracker.observe(
      observed('verified', { requestId: 'req-2', method: 'flash_call', awaitingCode: false }),
      'check',
    );
    await tracker.observe(observed('verified'), 'webhook');
    expect(received.map((e) => [e.event, e.requestId])).toStrictEqual([
      ['verification.verified', 'req-2'],
      ['verification.verified_again', 'req-1'],
    ]);
    for (const event of received) expect(event.methodsTried).toStrictEqual(['sms', 'flash_call']);
    // What the journey was charged when each was told: the flash call's 5, then the SMS's 3 beside it.
    expect(received.map((e) => e.journeyCost)).toStrictEqual([
      { amount: 5, currency: 'RUB' },
      { amount: 8, currency: 'RUB' },
    ]);
  });

  it('an emission whose instance died holds its event for the lease, then another instance emits it once', async () => {
    const dying = instance();
    const other = instance();
    let called!: () => void;
    const listening = new Promise<void>((resolve) => (called = resolve));
    // A listener that never returns: the process died mid-emission.
    dying.emitter.on('verification.verified', () => (called(), new Promise(() => undefined)));
    await dying.records.save(pending);
    void dying.tracker.observe(observed('verified'), 'webhook');
    await listening;
    const record = (await other.records.get('req-1'))!;
    // The lease (EMIT_LEASE_MS) as docs/ARCHITECTURE.md states it, written out: a test that read the
    // constant would follow a unit slip in it.
    now += 60_000 - 1;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: false,
    });
    now += 1;
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: ['verification.verified'],
      settled: true,
    });
    await expect(other.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: true,
    });
    expect(received.map((e) => e.event)).toStrictEqual(['verification.verified', 'verification.verified']);
  });

  it('a listener slower than the lease that then fails gives back its own claim only: the instance emitting meanwhile keeps it, nobody emits a third time', async () => {
    const [slow, other, third] = [instance(), instance(), instance()];
    let fail!: () => void;
    const failing = new Promise<void>((resolve) => (fail = resolve));
    let called!: () => void;
    const listening = new Promise<void>((resolve) => (called = resolve));
    slow.emitter.on('verification.verified', async () => {
      called();
      await failing;
      throw new TypeError('the CRM is down');
    });
    let otherCalled!: () => void;
    const otherListening = new Promise<void>((resolve) => (otherCalled = resolve));
    other.emitter.on('verification.verified', () => (otherCalled(), new Promise(() => undefined)));
    await slow.records.save(pending);
    const slowly = slow.tracker.observe(observed('verified'), 'webhook');
    await listening;
    const record = (await other.records.get('req-1'))!;
    now += 60_000;
    void other.tracker.emitDue(record, 'poll');
    await otherListening;
    fail();
    await expect(slowly).rejects.toThrow('will be delivered again');
    await expect(third.tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: [],
      settled: false,
    });
    expect(received.map((e) => e.event)).toStrictEqual(['verification.verified', 'verification.verified']);
  });

  it('a listener that fails: logged by its error’s name only, and the event and the journey’s verified come again', async () => {
    const { records, tracker, emitter } = instance();
    let fail = true;
    emitter.on('verification.verified', () => {
      if (fail) throw new TypeError('+79123456789 is not in the CRM');
    });
    await records.save(pending);
    await expect(tracker.observe(observed('verified'), 'webhook')).rejects.toThrow('will be delivered again');
    expect(warnings).toStrictEqual([
      {
        message: 'listener failed; claim released for redelivery',
        fields: { event: 'verification.verified', request_id: 'req-1', error: 'TypeError' },
      },
    ]);
    // A frontend's check is not failed by it: it answers with the record as stored.
    const record = (await records.get('req-1'))!;
    await expect(tracker.observeQuietly(observed('verified'), 'check', record)).resolves.toMatchObject({
      status: 'verified',
    });
    fail = false;
    await expect(tracker.emitDue(record, 'poll')).resolves.toStrictEqual({
      emitted: ['verification.verified'],
      settled: true,
    });
    // Three deliveries of `verified`, none of them `verified_again`: the journey's claim was given back.
    expect(received.map((e) => e.event)).toStrictEqual([
      'verification.verified',
      'verification.verified',
      'verification.verified',
    ]);
  });

  it('what an observation adds to the record: the API’s end, cost, code wait and verified time, never a step back', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, cost: undefined });
    const later = new Date(START + 600_000);
    await tracker.observe(
      observed('delivered', { expiresAt: later, cost: { amount: 5, currency: 'RUB' }, awaitingCode: false }),
      'poll',
    );
    expect(await records.get('req-1')).toMatchObject({
      status: 'delivered',
      delivered: true,
      expiresAt: later.getTime(),
      cost: { amount: 5, currency: 'RUB' },
      awaitingCode: false,
    });
    // An answer that leaves them out keeps what the record holds.
    await tracker.observe(observed('delivered', { expiresAt: undefined, awaitingCode: undefined }), 'poll');
    expect(await records.get('req-1')).toMatchObject({
      expiresAt: later.getTime(),
      cost: { amount: 5, currency: 'RUB' },
      awaitingCode: false,
    });
    // Verified first without the API's time, then with it: the API's time is kept once known.
    now += 2000;
    await tracker.observe(observed('verified', { expiresAt: undefined }), 'check');
    expect((await records.get('req-1'))!.verifiedAt).toBe(START + 2000);
    now += 2000;
    await tracker.observe(observed('verified', { expiresAt: undefined }), 'poll');
    expect((await records.get('req-1'))!.verifiedAt).toBe(START + 2000);
    await tracker.observe(observed('failed', { verifiedAt: new Date(START + 1) }), 'poll');
    expect(await records.get('req-1')).toMatchObject({ status: 'verified', verifiedAt: START + 2000 });
    expect(received.map((e) => e.event)).toStrictEqual(['verification.verified']);
  });

  it('a terminal record without a verified time takes the API’s when it comes', async () => {
    const { records, tracker } = instance();
    await records.save({ ...pending, status: 'verified', verifiedAt: null });
    await tracker.observe(observed('verified', { verifiedAt: new Date(START + 700) }), 'poll');
    expect((await records.get('req-1'))!.verifiedAt).toBe(START + 700);
    await tracker.observe(observed('verified', { verifiedAt: new Date(START + 900) }), 'poll');
    expect((await records.get('req-1'))!.verifiedAt).toBe(START + 700);
  });

  it('needs the event emitter, and says which module to import', () => {
    const { options, records, codec } = instance();
    expect(() => new VerificationTracker(options, store, records, telemetryOf(options), codec)).toThrow(
      'VerificationModule needs @nestjs/event-emitter: add EventEmitterModule.forRoot() to the imports of your AppModule',
    );
  });

  it('an emitted event stays emitted as long as its record is kept, and a test number’s says so', async () => {
    const { records, tracker } = instance();
    const test = { ...pending, requestId: 'test_0123456789abcdef' };
    await records.save(test);
    now += 100_000;
    await tracker.observe(observed('expired', { requestId: test.requestId }), 'poll');
    expect(received).toStrictEqual([expect.objectContaining({ event: 'verification.expired', test: true })]);
    const record = (await records.get(test.requestId))!;
    now = test.expiresAt + RECORD_RETENTION_MS - 1;
    await expect(tracker.emitDue(record, 'poll')).resolves.toStrictEqual({ emitted: [], settled: true });
    now += 1;
    await expect(tracker.emitDue(record, 'poll')).resolves.toMatchObject({
      emitted: ['verification.expired'],
    });
  });

  it('a listener that rejects with no error at all is logged as Error', async () => {
    const { records, tracker, emitter } = instance();
    emitter.on('verification.failed', () => Promise.reject(undefined));
    await records.save(pending);
    await expect(tracker.observe(observed('failed'), 'webhook')).rejects.toThrow('will be delivered again');
    expect(warnings).toStrictEqual([
      expect.objectContaining({ fields: expect.objectContaining({ error: 'Error' }) }),
    ]);
  });

  it('a journey’s verified whose listener failed is delivered by the next verified step, not told as verified_again', async () => {
    const { records, tracker, emitter } = instance();
    await twoStepJourney(records);
    let fail = true;
    emitter.on('verification.verified', () => {
      if (fail) throw new Error('listener down');
    });
    await expect(tracker.observe(observed('verified'), 'webhook')).rejects.toThrow('will be delivered again');
    fail = false;
    await tracker.observe(
      observed('verified', { requestId: 'req-2', method: 'flash_call', awaitingCode: false }),
      'check',
    );
    expect(received.map((e) => [e.event, e.requestId])).toStrictEqual([
      ['verification.verified', 'req-1'],
      ['verification.verified', 'req-2'],
    ]);
  });
});
