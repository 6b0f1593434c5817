import type { VerificationStore } from '../store/verification-store.interface.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { SessionRecord } from '../core/session-record.js';
import { pollIntervalMs, SLOWEST_POLL_INTERVAL_MS } from '../core/verification-method.js';

/** Name of the store's due-queue that holds the sessions the reconciler still has to settle. */
export const RECONCILE_QUEUE = 'reconcile';

/** How long after `expires_at` the "just after expiry" poll runs: the API needs a moment to flip the status. */
export const EXPIRY_SETTLE_MS = 1000;

/**
 * The reconciler's schedule, kept in the store so that every instance shares it: a member is a
 * `request_id`, its score the store-clock time of its next look. Sessions enter at start, move
 * after each poll, and leave once terminal with every due event emitted (or given up after grace).
 * A plain object SessionRecordRepository makes (`records.queue`): the owner of the sessions' keys.
 */
export class ReconcileQueue {
  constructor(
    private readonly options: ResolvedVerificationOptions,
    private readonly store: VerificationStore,
  ) {
    this.leaseMs = options.webhooks.enabled
      ? Math.max(options.reconcile.lazyIntervalMs, SLOWEST_POLL_INTERVAL_MS)
      : SLOWEST_POLL_INTERVAL_MS;
  }

  /** Time between two polls of one session: lazy when webhooks report outcomes, the spec's pace otherwise. */
  intervalMs(record: Pick<SessionRecord, 'method'>): number {
    return this.options.webhooks.enabled
      ? this.options.reconcile.lazyIntervalMs
      : pollIntervalMs(record.method);
  }

  /** Lease of a claimed member: if an instance dies while polling, another one takes over after this. */
  readonly leaseMs: number;

  /**
   * When a pending session should be polled next, after a look at `now`: one interval later, but
   * never past the moment just after expiry, and never past `expires_at` + grace. Null once the
   * grace is over (the session is given up).
   */
  nextPollAt(
    record: Pick<SessionRecord, 'method' | 'expiresAt'>,
    now: number,
    intervalMs = this.intervalMs(record),
  ): number | null {
    const giveUpAt = record.expiresAt + this.options.reconcile.graceMs;
    if (now >= giveUpAt) return null;
    let next = now + intervalMs;
    const justAfterExpiry = record.expiresAt + EXPIRY_SETTLE_MS;
    if (now < justAfterExpiry) next = Math.min(next, justAfterExpiry);
    return Math.min(next, giveUpAt);
  }

  /**
   * When a session of a canceled journey is looked at next: at the lazy pace (nobody waits on it, but
   * the API may still verify and charge it); null once webhooks report outcomes (a late one arrives by
   * webhook) or past its grace.
   */
  nextCanceledPollAt(record: Pick<SessionRecord, 'method' | 'expiresAt'>, now: number): number | null {
    if (this.options.webhooks.enabled) return null;
    return this.nextPollAt(record, now, this.options.reconcile.lazyIntervalMs);
  }

  /** Adds a session the module just started. */
  async track(record: SessionRecord): Promise<void> {
    if (!this.options.reconcile.enabled) return;
    const next = this.nextPollAt(record, this.store.now());
    if (next !== null) await this.store.schedule(RECONCILE_QUEUE, record.requestId, next);
  }

  /** A webhook announced more than the API shows yet: look again at the spec's pace, not lazily. */
  async pollSoon(record: SessionRecord): Promise<void> {
    if (!this.options.reconcile.enabled) return;
    await this.store.schedule(
      RECONCILE_QUEUE,
      record.requestId,
      this.store.now() + pollIntervalMs(record.method),
    );
  }

  /** Something failed (API, listener): look again one interval later, even when the session is terminal. */
  async retryLater(record: Pick<SessionRecord, 'requestId' | 'method'>): Promise<void> {
    if (!this.options.reconcile.enabled) return;
    await this.store.schedule(RECONCILE_QUEUE, record.requestId, this.store.now() + this.intervalMs(record));
  }

  /** Moves a session to an exact time (after a poll). */
  async scheduleAt(requestId: string, dueAt: number): Promise<void> {
    await this.store.schedule(RECONCILE_QUEUE, requestId, dueAt);
  }

  /** The session is settled (terminal, every event emitted) or given up. */
  async release(requestId: string): Promise<void> {
    await this.store.unschedule(RECONCILE_QUEUE, requestId);
  }

  /** Up to `limit` due sessions, each leased to this caller (see VerificationStore.claimDue). */
  claimDue(limit: number): Promise<string[]> {
    return this.store.claimDue(RECONCILE_QUEUE, limit, this.leaseMs);
  }

  size(): Promise<number> {
    return this.store.queueSize(RECONCILE_QUEUE);
  }
}
