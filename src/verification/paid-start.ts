import { Inject, Injectable } from '@nestjs/common';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import type {
  InitiateResult,
  KnownVerificationMethod,
  VerificationMethod,
  VerificationSession,
} from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { TestNumberApiClient } from '../test-numbers/test-number-api.client.js';
import { mayHaveBeenProcessed, VerificationApiError } from '../api/verification-api.error.js';
import type { DataKeys } from '../core/data-keys.js';
import { errorText } from '../core/error-text.js';
import { maskPhoneNumber } from '../core/phone-mask.js';
import {
  DEFAULT_SESSION_TTL_MS,
  MAX_SESSION_TTL_MS,
  newSessionRecord,
  type SessionRecord,
} from '../core/session-record.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { StartPermit } from '../protection/verification-protection.service.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { TestNumberBook } from '../test-numbers/test-number-book.js';
import { upstreamClientError } from './upstream-error.mapper.js';

/** The session a start asks the API for. */
export interface SessionOrder {
  /** E.164. */
  phoneNumber: string;
  method: KnownVerificationMethod;
  owner: string | undefined;
  /** A test start's client network (an IPv4 /24, an IPv6 /48): whose kept test sessions it counts in. */
  network?: string;
  /** The journey the session is a step of (none: a journey's first session). */
  journeyId?: string;
}

/** Set while any in-doubt start is remembered: a webhook for an unknown session costs no API call otherwise. */
const ANY_KEY = 'indoubt:any';
/** How far the API's `created_at` may lie from the module's clock at the start (clock skew, queueing). */
const CLOCK_SKEW_MS = 5 * 60_000;
/** Webhooks of a session may come this long after its expiry (the sender's retries). */
const LATE_WEBHOOK_MS = 3_600_000;

/** One start whose initiation may have created a session the module never heard of. */
interface InDoubtStart {
  method: VerificationMethod;
  owner?: string;
  /** Store-clock time the initiation was sent. */
  at: number;
}

/** A session adopted from an in-doubt start: its new record and the API's view of it. */
export interface AdoptedSession {
  record: SessionRecord;
  session: VerificationSession;
}

/**
 * Pays for one admitted start, a journey's first session or a switch's: the API is asked, the
 * session is recorded and followed, and protection's permit is settled with what happened (see
 * StartPermit). A test number's session is played by the module: nothing to admit or settle.
 *
 * A start whose outcome is unknown is kept in doubt. A `POST /v1/verify` that timed out, was reset or
 * answered garbage may still have created (and charged) a session, and the spec offers no way to look
 * it up: no idempotency key, no listing. Its first webhook is the only way to learn its `request_id`.
 * So the start is remembered (phone, method, owner, time) in the store, and a signed webhook for a
 * session the module has no record of is matched against it (`adopt`): the API is asked for the
 * session (the source of truth), and one whose number and method equal a remembered start, created
 * around its time, is adopted: recorded with that start's owner, followed by the reconciler, and its
 * events emitted like any other's. The caller's resend cooldown was kept meanwhile, so no second paid
 * initiation went out.
 */
@Injectable()
export class PaidStart {
  /** The host's test numbers (the options' table; the API client plays their sessions). */
  private readonly testNumbers: TestNumberBook;

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly api: VerificationApiClient,
    private readonly records: SessionRecordRepository,
    private readonly balance: VerificationBalanceWatch,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
  ) {
    this.testNumbers = new TestNumberBook(options.testNumbers);
  }

  /**
   * Whether a start of `phoneNumber` by `owner` is a test number's the module plays; for an owner not
   * on `testNumbers.owners` it is a real number.
   */
  plays(phoneNumber: string, owner: string | undefined): boolean {
    return (
      this.api instanceof TestNumberApiClient && this.testNumbers.admit(phoneNumber, owner) !== undefined
    );
  }

  /** A test number's session (see `testNumbers`): played by the module, nothing paid or settled. */
  async play(order: SessionOrder): Promise<SessionRecord> {
    if (!(this.api instanceof TestNumberApiClient) || !this.plays(order.phoneNumber, order.owner))
      throw new Error('PaidStart.play: not a test number this owner may play');
    return this.recorded(order, await this.api.play(this.request(order), order.network));
  }

  /** Pays for `order` under `permit`, which it settles whatever happens. */
  async pay(order: SessionOrder, permit: StartPermit): Promise<SessionRecord> {
    try {
      // A paid initiation whose session could not be recorded would never be followed: with the store
      // down, refuse before paying.
      await this.records.ensureReachable();
      const result = await this.initiate(order, permit);
      const record = await this.recorded(order, result, permit.suspected);
      await permit.commit(record);
      return record;
    } catch (error) {
      // Unsettled only when the store failed before or after the API call: a session may exist (and
      // be paid for), so everything the start took stays counted.
      await permit.rollback({ nothingSent: false, failure: error });
      throw error;
    }
  }

  private async initiate(order: SessionOrder, permit: StartPermit): Promise<InitiateResult> {
    try {
      return await this.api.initiate(this.request(order));
    } catch (error) {
      const failure = await this.refusalOf(error);
      // The API answered with a refusal, or the connection was refused: nothing was sent, and the
      // start gives back what it took (a time-out or a reset leaves it counted).
      await permit.rollback({
        nothingSent: !mayHaveBeenProcessed(error),
        failure,
        ...(error instanceof VerificationApiError && error.status === 429
          ? { upstreamRetryAfterMs: error.retryAfterMs ?? 1000 }
          : {}),
      });
      // The session may exist (and be paid for) all the same: its first webhook can reveal it.
      if (mayHaveBeenProcessed(error)) await this.remember(order);
      throw failure;
    }
  }

  /** What the caller is told of a failed initiation. */
  private async refusalOf(error: unknown): Promise<unknown> {
    // Method not enabled for the account ("not shown": 400 with a code, or 403): say so when the API says so.
    if (error instanceof VerificationApiError && error.status === 400 && /method/.test(error.errorCode ?? ''))
      return new VerificationClientError(
        'method_not_available',
        'This method is not available for this account',
      );
    return upstreamClientError(error, this.balance);
  }

  private request({ phoneNumber, method }: SessionOrder) {
    return { phoneNumber, method, expirySeconds: this.options.expirySeconds };
  }

  /** The started session, recorded and followed by the reconciler until its outcome is emitted. */
  private async recorded(
    { phoneNumber, owner, journeyId }: SessionOrder,
    result: InitiateResult,
    suspected?: boolean,
  ): Promise<SessionRecord> {
    const record = newSessionRecord(
      { ...result, phoneNumber: result.phoneNumber || phoneNumber },
      {
        owner,
        createdAt: this.options.clock(),
        ttlMs:
          this.options.expirySeconds === undefined
            ? DEFAULT_SESSION_TTL_MS
            : this.options.expirySeconds * 1000,
        as: 'answer',
        journeyId,
        suspected,
      },
    );
    await this.records.create(record);
    // The reconciler follows every session started here until its outcome is emitted.
    await this.records.follow(record);
    return record;
  }

  /** Store key of the in-doubt starts to one number (keyed digest, as protection's keys are: the key space lists no numbers). */
  static inDoubtKey(keys: DataKeys, phoneNumber: string): string {
    return `indoubt:${keys.digest(phoneNumber)}`;
  }

  /**
   * Remembers a start whose initiation may have gone through. Never throws: the caller is already
   * answering with the initiation's own failure. Without a webhook route nothing could reveal the
   * session, so nothing is kept.
   */
  /** The in-doubt starts stored under a key (sealed: they name the owner). */
  private entries(stored: string | null): InDoubtStart[] {
    return parseEntries(stored === null ? null : this.options.dataKeys.open(stored));
  }

  private async remember(start: {
    phoneNumber: string;
    method: VerificationMethod;
    owner?: string;
  }): Promise<void> {
    this.telemetry.logger.warn(
      'initiation outcome unknown: a session may exist upstream; it is adopted if a webhook reveals it',
      { method: start.method, phone: maskPhoneNumber(start.phoneNumber) },
    );
    this.telemetry.metrics.inDoubtStart(start.method, 'remembered');
    if (!this.options.webhooks.enabled) return;
    try {
      const at = this.store.now();
      const key = PaidStart.inDoubtKey(this.options.dataKeys, start.phoneNumber);
      const entries = [
        ...this.entries(await this.store.get(key)),
        { method: start.method, owner: start.owner, at },
      ];
      const kept = entries.filter((e) => e.at + this.lifetimeMs() > at);
      await this.store.set(key, this.options.dataKeys.seal(JSON.stringify(kept)), this.lifetimeMs());
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
   * Rejects when the API or the store fails, so that the webhook is answered 503 and comes again.
   */
  async adopt(requestId: string): Promise<AdoptedSession | null> {
    if ((await this.store.get(ANY_KEY)) === null) return null;
    let session: VerificationSession;
    try {
      session = await this.api.getSession(requestId);
    } catch (error) {
      if (error instanceof VerificationApiError && error.status === 404) return null;
      throw error;
    }
    const key = PaidStart.inDoubtKey(this.options.dataKeys, session.phoneNumber);
    const entries = this.entries(await this.store.get(key));
    const match = closestStart(entries, session, this.options.api.timeoutMs);
    if (!match) return null;
    const rest = entries.filter((e) => e !== match);
    if (rest.length > 0)
      await this.store.set(key, this.options.dataKeys.seal(JSON.stringify(rest)), this.lifetimeMs());
    else await this.store.delete(key);
    // A subject erased since the start (its number or its owner) is not brought back by its webhook.
    const erasedAt = await this.records.subjects.forgottenAt(session.phoneNumber, match.owner);
    if (erasedAt !== undefined && erasedAt >= match.at) return null;

    // The state at initiation; the tracker merges the API's view into it and emits what is due.
    const record = newSessionRecord(session, {
      owner: match.owner,
      createdAt: match.at,
      ttlMs:
        this.options.expirySeconds === undefined ? DEFAULT_SESSION_TTL_MS : this.options.expirySeconds * 1000,
      as: 'seed',
    });
    await this.records.create(record);
    await this.records.follow(record);
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

/** The remembered start of the same method whose time is nearest the session's creation, within reach. */
function closestStart(
  entries: InDoubtStart[],
  session: VerificationSession,
  timeoutMs: number,
): InDoubtStart | undefined {
  const created = session.createdAt?.getTime();
  let best: InDoubtStart | undefined;
  let bestDistance = Infinity;
  for (const entry of entries) {
    if (entry.method !== session.method) continue;
    const distance = created === undefined ? 0 : Math.abs(created - (entry.at + timeoutMs / 2));
    if (
      created !== undefined &&
      (created < entry.at - CLOCK_SKEW_MS || created > entry.at + timeoutMs + CLOCK_SKEW_MS)
    )
      continue;
    if (distance < bestDistance) {
      best = entry;
      bestDistance = distance;
    }
  }
  return best;
}
