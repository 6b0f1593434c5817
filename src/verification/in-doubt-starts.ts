import { longestCallMs } from '../api/api-client.options.js';
import { Inject, Injectable } from '@nestjs/common';
import type { VerificationMethod, VerificationSession } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import type { DataKeys } from '../core/data-keys.js';
import { errorText } from '../core/error-text.js';
import { maskPhoneNumber } from '../core/phone-mask.js';
import { MAX_SESSION_TTL_MS, newSessionRecord, type SessionRecord } from '../core/session-record.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { replaceIfEquals } from '../store/store-replace.js';
import { releaseClaim, takeClaim } from '../store/store-claim.js';
import { VerificationStoreUnavailableError } from '../store/store-unavailable.error.js';
import { VerificationStore } from '../store/verification-store.interface.js';

/** Set while any in-doubt start is remembered: a webhook for an unknown session costs no API call otherwise. */
const ANY_KEY = 'indoubt:any';
/** How far the API's `created_at` may lie from the module's clock at the start (clock skew, queueing). */
const CLOCK_SKEW_MS = 5 * 60_000;
/**
 * Two callers' starts of one number and method sent less than this apart cannot be told apart by their
 * sessions' creation times (the API may create either first): their sessions are adopted for neither.
 */
const SIMULTANEOUS_MS = 1000;
/** Webhooks of a session may come this long after its expiry (the sender's retries). */
const LATE_WEBHOOK_MS = 3_600_000;
/** A session's adoption claim lasts its API read (a GET: longestCallMs) and this for its store writes. */
const ADOPTING_MARGIN_MS = 5_000;
/** Reads and conditional writes a change of a number's list takes before it gives up (others writing it). */
const REMEMBER_TRIES = 8;

/** One start whose initiation may have created a session the module never heard of. */
interface InDoubtStart {
  method: VerificationMethod;
  owner?: string;
  /** What it was for (`purpose` on start). */
  purpose?: string;
  /**
   * Store-clock time the start reserved its erasure index slots, just before its initiation was sent: its
   * session is created upstream after it, and an erasure since then is one the start did not see.
   */
  at: number;
}

/** A session adopted from an in-doubt start: its new record and the API's view of it. */
export interface AdoptedSession {
  record: SessionRecord;
  session: VerificationSession;
}

/**
 * Starts whose outcome is unknown. A `POST /v1/verify` that timed out, was reset or answered garbage
 * may still have created (and charged) a session, and the spec offers no way to look it up: no
 * idempotency key, no listing. Its first webhook is the only way to learn its `request_id`. So the
 * start is remembered (phone, method, owner, time) in the store, sealed, and a signed webhook for a
 * session the module has no record of is matched against it (`adopt`): the API is asked for the
 * session (the source of truth), and one whose number and method equal a remembered start, created
 * around its time, is adopted: recorded with that start's owner, followed by the reconciler, and its
 * events emitted like any other's. The caller's resend cooldown was kept meanwhile, so no second paid
 * initiation went out.
 */
@Injectable()
export class InDoubtStarts {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
  ) {}

  /** Store key of the in-doubt starts to one number (keyed digest, as protection's keys are: the key space lists no numbers). */
  static inDoubtKey(keys: DataKeys, phoneNumber: string): string {
    return `indoubt:${keys.digest(phoneNumber)}`;
  }

  /** The in-doubt starts stored under a key (sealed: they name the owner). */
  private entries(stored: string | null): InDoubtStart[] {
    return parseEntries(stored === null ? null : this.options.dataKeys.open(stored));
  }

  /**
   * Remembers a start whose initiation may have gone through. Never throws: the caller is already
   * answering with the initiation's own failure. Without a webhook route nothing could reveal the
   * session, so nothing is kept. `sentAt`: when the start reserved its index slots, just before it was sent
   * (the session is created upstream after it, not after the failure that ends the wait for its answer).
   */
  async remember(
    start: {
      phoneNumber: string;
      method: VerificationMethod;
      owner?: string;
      purpose?: string;
    },
    sentAt: number,
  ): Promise<void> {
    this.telemetry.logger.warn(
      `initiation outcome unknown: a session may exist upstream; ${
        this.options.webhooks.enabled
          ? 'it is adopted if a webhook reveals it'
          : 'without the webhook route it is never adopted'
      }`,
      { method: start.method, phone: maskPhoneNumber(start.phoneNumber) },
    );
    this.telemetry.metrics.inDoubtStart(start.method, 'remembered');
    if (!this.options.webhooks.enabled) return;
    try {
      const key = InDoubtStarts.inDoubtKey(this.options.dataKeys, start.phoneNumber);
      const entry = { method: start.method, owner: start.owner, purpose: start.purpose, at: sentAt };
      await this.change('remember', key, (entries, now) =>
        [...entries, entry].filter((e) => e.at + this.lifetimeMs() > now),
      );
      await this.store.set(ANY_KEY, '1', this.lifetimeMs());
    } catch (error) {
      this.telemetry.logger.warn('an in-doubt start could not be remembered', {
        error: errorText(error),
      });
    }
  }

  /**
   * The session behind a webhook that names an unknown `request_id`, adopted when it answers a
   * remembered start; null when it does not (another integration's session, or none remembered).
   * Rejects when the API or the store fails, so that the webhook is answered 503 and comes again; null
   * too while another delivery of the session adopts it.
   */
  async adopt(requestId: string): Promise<AdoptedSession | null> {
    if ((await this.store.get(ANY_KEY)) === null) return null;
    // A session the module recorded and then erased (its start's subject forgotten while the API was asked)
    // is no start's in doubt: its late webhook must not take the place of another start's session. Read
    // only while a start is in doubt: every other webhook is spared the read.
    if (await this.records.isErased(requestId)) return null;
    // One delivery adopts a session at a time: another (its other event, a retry on another instance), matching
    // it against the starts the first left on the list, would take someone else's start. It is acknowledged:
    // the first's observation, and the reconciler following what it records, emit what the API says.
    const leaseMs = longestCallMs(this.options.api, 'GET') + ADOPTING_MARGIN_MS;
    const claim = await takeClaim(this.store, `indoubt:adopting:${requestId}`, leaseMs);
    if (claim === null) return null;
    try {
      // Adopted by a delivery that ended just before this one's claim (its record written since this one looked).
      if ((await this.records.get(requestId)) !== null) return null;
      return await this.adoptUnknown(requestId);
    } finally {
      await releaseClaim(this.store, claim).catch(() => undefined);
    }
  }

  /** `adopt`'s matching and recording, under the session's claim. */
  private async adoptUnknown(requestId: string): Promise<AdoptedSession | null> {
    let session: VerificationSession;
    try {
      session = await this.api.getSession(requestId);
    } catch (error) {
      if (error instanceof VerificationApiError && error.status === 404) return null;
      throw error;
    }
    const key = InDoubtStarts.inDoubtKey(this.options.dataKeys, session.phoneNumber);
    const entries = this.entries(await this.store.get(key));
    const match = closestStart(entries, session, this.options.api.timeoutMs);
    if (!match) return null;
    await this.change('adopt', key, (left) => {
      const at = left.findIndex((e) => JSON.stringify(e) === JSON.stringify(match));
      return at === -1 ? left : left.toSpliced(at, 1);
    });
    // A subject erased since the start (its number or its owner) is not brought back by its webhook. The
    // index slots are reserved first: their batch reads the erasure marks, which the record's batch reads
    // again, so an erasure that marks the subject after the check below still removes the session.
    const reserved = await this.records.reserveIndex({
      phoneNumber: session.phoneNumber,
      owner: match.owner,
    });
    const erasedAt = await this.records.subjects.forgottenAt(session.phoneNumber, match.owner);
    if (erasedAt !== undefined && erasedAt >= match.at) {
      await this.records.releaseIndex(reserved);
      return null;
    }

    // The state at initiation; the tracker merges the API's view into it and emits what is due.
    const record = newSessionRecord(session, {
      owner: match.owner,
      purpose: match.purpose,
      createdAt: match.at,
      ttlMs: this.options.sessionTtlMs,
      as: 'seed',
    });
    if (!(await this.records.createAndFollow(record, [], undefined, reserved))) return null;
    // A paid initiation after all: counted where the start route counts its own.
    this.telemetry.metrics.started(session.method);
    this.telemetry.metrics.spent(session.method, session.cost);
    this.telemetry.metrics.inDoubtStart(session.method, 'adopted');
    this.telemetry.logger.warn('adopted a session whose initiation outcome was unknown', {
      request_id: session.requestId,
      method: session.method,
      phone: maskPhoneNumber(session.phoneNumber),
    });
    return { record, session };
  }

  /**
   * Writes the number's list as `change` makes it of the list as read, only over what was read (the list
   * empty: deleted): a start remembered, or one adopted, while another instance writes it keeps both.
   */
  private async change(
    operation: 'remember' | 'adopt',
    key: string,
    change: (entries: InDoubtStart[], now: number) => InDoubtStart[],
  ): Promise<void> {
    for (let tries = 0; ; tries++) {
      const stored = await this.store.get(key);
      const next = change(this.entries(stored), this.store.now());
      const sealed = next.length === 0 ? null : this.options.dataKeys.seal(JSON.stringify(next));
      const written =
        stored === null
          ? sealed === null || (await this.store.setIfAbsent(key, sealed, this.lifetimeMs()))
          : await replaceIfEquals(this.store, key, stored, sealed, this.lifetimeMs());
      if (written) return;
      if (tries + 1 >= REMEMBER_TRIES)
        throw new VerificationStoreUnavailableError(operation, 'the in-doubt starts kept changing');
    }
  }

  /** How long a start stays in doubt: its session's whole life plus the sender's late retries. */
  private lifetimeMs(): number {
    const ttl =
      this.options.expirySeconds === undefined ? MAX_SESSION_TTL_MS : this.options.expirySeconds * 1000;
    return this.options.api.timeoutMs + ttl + LATE_WEBHOOK_MS;
  }
}

function parseEntries(raw: string | null): InDoubtStart[] {
  if (raw === null) return [];
  try {
    const parsed: unknown = JSON.parse(raw);
    return Array.isArray(parsed) ? (parsed as InDoubtStart[]) : [];
  } catch {
    return [];
  }
}

/**
 * The remembered start a session answers: of the same method, within reach of its creation. A session is
 * created after its own start was sent, so the latest start sent by then is its own (the nearest middle
 * of a wait would hand a session created soon after its send to the start sent before it). A creation
 * before every send (the API's clock behind the module's) takes the earliest send, the nearest in time.
 * By send times, whatever order the entries were remembered in (two instances' waits fail apart). None
 * when another caller's start (another owner or purpose) was sent within SIMULTANEOUS_MS of it.
 */
function closestStart(
  entries: InDoubtStart[],
  session: VerificationSession,
  timeoutMs: number,
): InDoubtStart | undefined {
  const created = session.createdAt?.getTime();
  const same = entries.filter((entry) => entry.method === session.method);
  if (created === undefined) return same[0];
  const reach = same.filter(
    (entry) => created >= entry.at - CLOCK_SKEW_MS && created <= entry.at + timeoutMs + CLOCK_SKEW_MS,
  );
  const sentBefore = reach.filter((entry) => entry.at <= created);
  const match =
    sentBefore.length > 0
      ? sentBefore.reduce((a, b) => (b.at > a.at ? b : a))
      : reach.reduce<InDoubtStart | undefined>((a, b) => (a === undefined || b.at < a.at ? b : a), undefined);
  if (match === undefined) return undefined;
  const twin = reach.some(
    (entry) =>
      (entry.owner !== match.owner || entry.purpose !== match.purpose) &&
      Math.abs(entry.at - match.at) < SIMULTANEOUS_MS,
  );
  return twin ? undefined : match;
}
