import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import {
  resolveVerificationOptions,
  type VerificationModuleOptions,
} from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { pendingSession } from '../../test/support/session-records.fixture.js';
import { EXPIRY_SETTLE_MS, ReconcileQueue } from './reconcile-queue.js';

/**
 * The reconciler's schedule as the instances sharing a store see it: when a session is looked at
 * next (each time one tick before and at its moment), how long a claimed one stays leased, and what
 * the switches `reconcile.enabled` and `webhooks.enabled` change.
 */
const START = 1_700_000_000_000;
const API = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };
const SMS_POLL_MS = 2500;
const WEBHOOK_SECRET = 'whsec_c2VjcmV0c2VjcmV0c2VjcmV0';
const REVERSE_CALL_POLL_MS = 1500;

describe('ReconcileQueue: when each instance looks at a session next', () => {
  let now: number;
  let store: MemoryStore;

  function queue(options: Partial<VerificationModuleOptions> = {}): ReconcileQueue {
    return new ReconcileQueue(resolveVerificationOptions({ api: API, ...options }), store);
  }

  /** A pending SMS started at START, ending `lifeMs` later. */
  function sms(lifeMs = 300_000, fields: Partial<SessionRecord> = {}): SessionRecord {
    return pendingSession(
      { requestId: 'req-1', phoneNumber: '+79123456789', expiresAt: START + lifeMs, ...fields },
      START,
    );
  }

  /** The session is handed to a claimer at `at` and not one millisecond before. */
  async function expectDueAt(reconcile: ReconcileQueue, at: number): Promise<void> {
    now = at - 1;
    expect(await reconcile.claimDue(10)).toStrictEqual([]);
    now = at;
    expect(await reconcile.claimDue(10)).toStrictEqual(['req-1']);
  }

  beforeEach(() => {
    now = START;
    store = new MemoryStore({ clock: () => now });
  });
  afterEach(() => store.close());

  it('a started session is looked at one poll interval later, at the pace of its method', async () => {
    const reconcile = queue({ webhooks: { enabled: false } });
    await reconcile.track(sms());
    await expectDueAt(reconcile, START + SMS_POLL_MS);
    await reconcile.release('req-1');
    now = START;
    await reconcile.track(sms(300_000, { method: 'reverse_flash_call' }));
    await expectDueAt(reconcile, START + REVERSE_CALL_POLL_MS);
  });

  it('with webhooks reporting outcomes, at the lazy pace', async () => {
    const reconcile = queue({
      webhooks: { enabled: true, secret: WEBHOOK_SECRET },
      reconcile: { lazyIntervalMs: 7000 },
    });
    await reconcile.track(sms());
    await expectDueAt(reconcile, START + 7000);
  });

  it('never later than just after expiry, nor than the end of the grace; given up at its end', () => {
    const reconcile = queue({ webhooks: { enabled: false }, reconcile: { graceMs: 60_000 } });
    const record = sms(10_000);
    const expiry = START + 10_000;
    // Ahead of expiry by less than one interval: the look moves to just after expiry.
    expect(reconcile.nextPollAt(record, expiry - 1000)).toBe(expiry + EXPIRY_SETTLE_MS);
    // One tick before the settle moment and at it: one interval on, never a moment already past.
    expect(reconcile.nextPollAt(record, expiry + EXPIRY_SETTLE_MS - 1)).toBe(expiry + EXPIRY_SETTLE_MS);
    expect(reconcile.nextPollAt(record, expiry + EXPIRY_SETTLE_MS)).toBe(
      expiry + EXPIRY_SETTLE_MS + SMS_POLL_MS,
    );
    expect(reconcile.nextPollAt(record, expiry + 30_000)).toBe(expiry + 30_000 + SMS_POLL_MS);
    // The grace ends the schedule: the last look lands on its end, and at its end the session is given up.
    expect(reconcile.nextPollAt(record, expiry + 59_000)).toBe(expiry + 60_000);
    expect(reconcile.nextPollAt(record, expiry + 60_000 - 1)).toBe(expiry + 60_000);
    expect(reconcile.nextPollAt(record, expiry + 60_000)).toBeNull();
  });

  it('a session of a canceled journey: at the lazy pace without webhooks, not at all with them', () => {
    const record = sms();
    const polled = queue({ webhooks: { enabled: false }, reconcile: { lazyIntervalMs: 9000 } });
    expect(polled.nextCanceledPollAt(record, START)).toBe(START + 9000);
    const reported = queue({ webhooks: { enabled: true, secret: WEBHOOK_SECRET } });
    expect(reported.nextCanceledPollAt(record, START)).toBeNull();
  });

  it('a webhook that announced more than the API shows: looked at again at the spec’s pace, not lazily', async () => {
    const reconcile = queue({ webhooks: { enabled: true, secret: WEBHOOK_SECRET } });
    now = START + 4000;
    await reconcile.pollSoon(sms());
    await expectDueAt(reconcile, START + 4000 + SMS_POLL_MS);
  });

  it('after a failure, one interval later of the pace in force', async () => {
    const reconcile = queue({ webhooks: { enabled: true, secret: WEBHOOK_SECRET } });
    now = START + 4000;
    await reconcile.retryLater(sms());
    await expectDueAt(reconcile, START + 4000 + 15_000);
  });

  it('with the reconciler off, nothing is scheduled by a start, a webhook or a failure', async () => {
    const reconcile = queue({ webhooks: { enabled: false }, reconcile: { enabled: false } });
    await reconcile.track(sms());
    await reconcile.pollSoon(sms());
    await reconcile.retryLater(sms());
    expect(await reconcile.size()).toBe(0);
    now = START + 3_600_000;
    expect(await reconcile.claimDue(10)).toStrictEqual([]);
  });

  it('a claimed session stays with its claimer for the slowest poll, or the lazy interval when longer', async () => {
    for (const [options, leaseMs] of [
      [{ webhooks: { enabled: false } }, SMS_POLL_MS],
      [{ webhooks: { enabled: true, secret: WEBHOOK_SECRET } }, 15_000],
      [
        { webhooks: { enabled: true, secret: WEBHOOK_SECRET }, reconcile: { lazyIntervalMs: 1000 } },
        SMS_POLL_MS,
      ],
    ] as const) {
      now = START;
      const reconcile = queue(options);
      await reconcile.scheduleAt('req-1', START);
      expect(await reconcile.claimDue(10)).toStrictEqual(['req-1']);
      // Another instance finds it leased until the lease ends, then takes it over.
      await expectDueAt(reconcile, START + leaseMs);
      await reconcile.release('req-1');
    }
  });
});
