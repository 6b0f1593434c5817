import { Inject, Injectable, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { DAY_MS } from '../core/clock.js';
import { erasureMarkKey, type ErasureSubject } from '../core/erasure-marks.js';
import { isTestSession } from '../core/test-session.js';
import { isEventOf, VerificationEventName, type VerificationEvent } from '../core/verification-events.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { refusalReason } from '../core/refusal-reason.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { forgetHistory } from './history-erasure.js';
import { linkRing } from './history-links.js';
import { foldKey, shelfOf, SHELVES, type Shelf } from './history-shelves.js';
import { HOUR_MS, paidKey, refusalAdmission } from './refusal-admission.js';
import {
  numberRing,
  ownerRing,
  parseEntry,
  repeatsKey,
  ringOf,
  withoutUndefined,
  withRepeats,
  type StoredEntry,
} from './history-rings.js';
import type { VerificationHistoryEntry, VerificationHistoryQuery } from './verification-history.types.js';

/** A ring's counters: each increment renews them (StoreWriteOptions.renew). */
const RENEWED = { renew: true } as const;

/** The events an outcome entry is written for. */
const OUTCOME_EVENTS = [
  VerificationEventName.verified,
  VerificationEventName.failed,
  VerificationEventName.expired,
  VerificationEventName.codeRequired,
] as const;

/**
 * Per-number and per-owner history for support (`history` option): one entry per start, switch,
 * check (right or wrong, never the code), refusal with its reason, and outcome with its cost.
 *
 * Kept in the store per number and per owner as five shelves of `maxEntries` slots each (see
 * `shelfOf`; an atomic counter picks the slot; each slot expires `retentionDays` after it was
 * written), so every instance writes and reads the same history, a number's history is bounded
 * whatever its traffic, and nobody else's failures, starts, refusals or resumes push a verified
 * session's trail or a wrong code out. Keys name numbers
 * and owners by keyed digest, as protection's keys do; each entry is sealed with the data key (it
 * holds the E.164 number and the owner, which support reads back). Writing never fails a
 * verification: a store error loses the entry, logged.
 */
@Injectable()
export class VerificationHistory implements OnModuleInit, OnModuleDestroy {
  readonly #listener = (event: VerificationEvent): Promise<void> => this.outcome(event);

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    // Optional so that the tracker's boot error names EventEmitterModule (a boot without it fails there).
    @Optional() private readonly emitter?: EventEmitter2,
  ) {}

  /** Whether history is kept (`history` given). */
  get enabled(): boolean {
    return this.options.history !== false;
  }

  onModuleInit(): void {
    if (this.enabled) for (const name of OUTCOME_EVENTS) this.emitter?.on(name, this.#listener);
  }

  onModuleDestroy(): void {
    for (const name of OUTCOME_EVENTS) this.emitter?.off(name, this.#listener);
  }

  /**
   * One number's entries (`phoneNumber`, E.164) or one owner's, oldest first, within `from`..`to`
   * (inclusive) when given. Empty when history is off.
   */
  async list(query: VerificationHistoryQuery): Promise<VerificationHistoryEntry[]> {
    const ring = ringOf(this.options.dataKeys, query, this.options.phone.defaultCountry);
    if (this.options.history === false) return [];
    const from = query.from?.getTime() ?? -Infinity;
    const to = query.to?.getTime() ?? Infinity;
    const { maxEntries } = this.options.history;
    const slots = SHELVES.flatMap((shelf) =>
      Array.from({ length: maxEntries }, (_, i) => `${ring}:${shelf}:${i}`),
    );
    const texts = await Promise.all(slots.map((slot) => this.store.get(slot)));
    const entries: StoredEntry[] = [];
    const slotOf: string[] = [];
    const seen = new Set<string>();
    texts.forEach((text, i) => {
      const opened = text === null ? null : this.options.dataKeys.open(text);
      const entry = opened === null ? null : parseEntry(opened);
      // A promoted start and its original (while still on its shelf) are one entry: the same seq and time.
      // The seq alone is not an entry's: on a store that ignores `renew` its counter restarts while entries
      // it numbered live on.
      const same = entry ? `${entry.seq}:${entry.at}` : '';
      if (entry && entry.at >= from && entry.at <= to && !seen.has(same)) {
        seen.add(same);
        entries.push(entry);
        slotOf.push(slots[i]!);
      }
    });
    const folds = await Promise.all(
      entries.map((entry, i) => (entry.fold === undefined ? null : this.store.get(repeatsKey(slotOf[i]!)))),
    );
    return entries
      .map((entry, i) => withRepeats(entry, folds[i] ?? null))
      .sort((a, b) => a.at - b.at || a.seq - b.seq)
      .map(({ at, seq: _seq, fold: _fold, promoted: _promoted, lastAt, ...rest }) => ({
        ...rest,
        at: new Date(at),
        ...(lastAt === undefined ? {} : { lastAt: new Date(lastAt) }),
      }));
  }

  /**
   * Writes an entry to its number's ring and its owner's. Never throws. `admits` (refusals only)
   * decides whether a new entry of the `other` shelf may be written to a ring; a repeat always is.
   */
  async record(
    entry: Omit<VerificationHistoryEntry, 'at' | 'test'>,
    admits: (ring: string) => Promise<boolean> = async () => true,
  ): Promise<void> {
    if (this.options.history === false) return;
    const stored: Omit<StoredEntry, 'seq'> = {
      ...withoutUndefined(entry),
      at: this.store.now(),
      ...(isTestSession(entry.requestId) ? { test: true } : {}),
    };
    const rings: [string, boolean][] = [
      [numberRing(this.options.dataKeys, entry.phoneNumber), true],
      ...(entry.owner === undefined
        ? []
        : [[ownerRing(this.options.dataKeys, entry.owner), false] as [string, boolean]]),
    ];
    const verified = entry.kind === 'outcome' && entry.status === 'verified';
    const subjects: ErasureSubject[] = [
      { phoneNumber: entry.phoneNumber },
      ...(entry.owner === undefined ? [] : [{ owner: entry.owner }]),
    ];
    try {
      const marks = await this.erasureMarks(subjects);
      const written = await Promise.all(
        rings.map(async ([ring, perNumber]) => {
          const wrote = await this.append(ring, stored, perNumber, admits);
          if (verified && entry.requestId !== undefined)
            await this.promote(ring, entry.requestId, shelfOf({ ...stored, kind: 'start' }));
          return wrote;
        }),
      );
      // Each ring links the other when either got a new entry: an erasure finds the other side's entry there
      // once this one is pushed out of its own ring (or, in a number's, folded into another owner's). Both
      // ways, even when one side's was a repeat: an erasure removes the other side's links to the erased
      // ring through the ring's own links (a link one way only would outlive it, naming the erased ring).
      const ttlMs = (this.options.history as { retentionDays: number }).retentionDays * DAY_MS;
      const shared = rings.length === 2 && written.some(Boolean);
      await Promise.all(
        rings.map(([ring], i) => (shared ? linkRing(this.store, ring, rings[1 - i]![0], ttlMs) : null)),
      );
      // A subject erased while the entry was on its way (its mark changed since): the erasure may have read
      // the rings before the entry landed, so it runs again, in this entry's ring of the other side too (the
      // subject's own ring, erased first, no longer leads there).
      // Only what was written up to the erasure (its mark's time, or this entry's on a clock behind it): an
      // entry written after the erasure answered is not the erasure's.
      const now = await this.erasureMarks(subjects);
      await Promise.all(
        subjects.map((subject, i) => {
          if (now[i] === marks[i]) return undefined;
          const other = rings[1 - i]?.[0];
          const upTo = Math.max(Number(now[i]?.split(':')[0]) || 0, stored.at);
          return forgetHistory(this.store, this.options, subject, other === undefined ? [] : [other], upTo);
        }),
      );
    } catch (error) {
      this.telemetry.logger.warn('history: an entry could not be written', {
        kind: entry.kind,
        error: (error as Error)?.name ?? 'Error',
      });
    }
  }

  private erasureMarks(subjects: readonly ErasureSubject[]): Promise<(string | null)[]> {
    return Promise.all(subjects.map((s) => this.store.get(erasureMarkKey(this.options.dataKeys, s))));
  }

  /**
   * A refused or failed operation, when the number is known: a wrong code (`invalid_code`) is a
   * `check` entry, any other refusal a `refusal` entry with its `error_code` and reason. Errors that
   * are not refusals (a bug, the store down) are not the caller's doing and are not written.
   * A repeat of a refusal already written this hour is counted on its entry, and a new refusal entry
   * is written to a ring that holds a paid entry (see `refusalAdmission`); only a new entry of a ring without
   * one spends a refusal entry of each of `callers`' hourly budget (the request's owner, address and
   * network; REFUSAL_ENTRIES_PER_CALLER_HOUR), and past any one's is not written.
   */
  async refused(
    operation: string,
    error: unknown,
    context: {
      phoneNumber?: string;
      method?: string;
      requestId?: string;
      purpose?: string;
      assessment?: { decision: string; reason?: string };
    },
    owner: string | undefined,
    callers: readonly string[] = [],
  ): Promise<void> {
    if (context.phoneNumber === undefined || !(error instanceof VerificationClientError)) return;
    if (this.options.history === false) return;
    const about = {
      phoneNumber: context.phoneNumber,
      owner,
      method: context.method,
      requestId: context.requestId,
      purpose: context.purpose,
    };
    if (operation === 'check' && error.errorCode === 'invalid_code')
      return this.record({ ...about, kind: 'check', check: 'wrong' });
    const reason =
      refusalReason(error) ?? (typeof error.extra.reason === 'string' ? error.extra.reason : undefined);
    const { assessment } = context;
    const entry = { ...about, kind: 'refusal', operation, errorCode: error.errorCode, reason } as const;
    const admission = refusalAdmission(this.store, this.options.dataKeys, callers);
    await this.record(assessment === undefined ? entry : { ...entry, assessment }, admission);
  }

  /**
   * Erases a number's or an owner's entries (see `forgetHistory`); answers how many its own ring held.
   * Works with history off too (entries kept while it was on are erased).
   */
  forget(subject: VerificationHistoryQuery): Promise<number> {
    return forgetHistory(this.store, this.options, subject);
  }

  /**
   * A verified session's start (or switch) copied to the ring's `verified` shelf, so that others'
   * starts of the number do not push the start of a verified session out. Reads `shelf`, where a start
   * of the session's method is filed.
   */
  private async promote(ring: string, requestId: string, shelf: Shelf): Promise<void> {
    const { maxEntries, retentionDays } = this.options.history as {
      maxEntries: number;
      retentionDays: number;
    };
    const texts = await Promise.all(
      Array.from({ length: maxEntries }, (_, i) => this.store.get(`${ring}:${shelf}:${i}`)),
    );
    const start = texts
      .map((text) => (text === null ? null : this.options.dataKeys.open(text)))
      .map((opened) => (opened === null ? null : parseEntry(opened)))
      .find((entry) => entry?.requestId === requestId && entry.resumed !== true);
    if (!start) return;
    const ttlMs = retentionDays * DAY_MS;
    const { value: slot } = await this.store.increment(`${ring}:verified:seq`, 1, ttlMs, RENEWED);
    await this.store.set(
      `${ring}:verified:${(slot - 1) % maxEntries}`,
      this.options.dataKeys.seal(JSON.stringify({ ...start, promoted: true })),
      ttlMs,
    );
  }

  /**
   * Into the entry's shelf of the ring (see `shelfOf`): a refusal or resume the same as one already on
   * its shelf this hour is not a new entry but a repeat of that one (`count`, `lastAt`, kept beside its
   * slot). What a ring holds is bounded whatever its traffic: its slots, one repeat count per slot of
   * the `other` shelf, and the folds of the current hour (each kept an hour).
   */
  private async append(
    ring: string,
    entry: Omit<StoredEntry, 'seq'>,
    perNumber: boolean,
    admits: (ring: string) => Promise<boolean>,
  ): Promise<boolean> {
    const { maxEntries, retentionDays } = this.options.history as {
      maxEntries: number;
      retentionDays: number;
    };
    const ttlMs = retentionDays * DAY_MS;
    const shelf = shelfOf(entry);
    const fold = foldKey(this.options.dataKeys, ring, entry, perNumber);
    if (fold !== undefined) {
      const { value: count } = await this.store.increment(`${fold}:n`, 1, HOUR_MS);
      if (count > 1) {
        await this.repeat(fold, count, entry.at, ttlMs);
        return false;
      }
      // Not admitted: the fold is given back, so that the next one admitted is written.
      if (!(await admits(ring))) {
        await this.store.delete(`${fold}:n`);
        return false;
      }
    }
    // The shelf's counter picks the slot; the ring's orders entries of the same millisecond. Both live
    // as long as the last entry they numbered (RENEWED): restarted earlier, they would write over it.
    const [{ value: slot }, { value: seq }] = await Promise.all([
      this.store.increment(`${ring}:${shelf}:seq`, 1, ttlMs, RENEWED),
      this.store.increment(`${ring}:seq`, 1, ttlMs, RENEWED),
    ]);
    const slotKey = `${ring}:${shelf}:${(slot - 1) % maxEntries}`;
    await Promise.all([
      this.store.set(
        slotKey,
        this.options.dataKeys.seal(
          JSON.stringify({ ...entry, seq, ...(fold === undefined ? {} : { fold }) }),
        ),
        ttlMs,
      ),
      shelf === 'other'
        ? this.store.delete(repeatsKey(slotKey))
        : shelf === 'free'
          ? undefined
          : this.store.set(paidKey(ring), '1', ttlMs),
      fold === undefined ? undefined : this.store.set(fold, `${seq} ${slotKey}`, HOUR_MS),
    ]);
    return true;
  }

  /** A repeat of a folded entry: its count and last time beside its slot (`<seq>:<count>:<last at>`). */
  private async repeat(fold: string, count: number, at: number, ttlMs: number): Promise<void> {
    const pointer = await this.store.get(fold);
    // Its first is still being written: the next repeat carries this one's count.
    if (pointer === null) return;
    const [seq, slotKey] = pointer.split(' ');
    await this.store.set(repeatsKey(slotKey!), `${seq}:${count}:${at}`, ttlMs);
  }

  private async outcome(event: VerificationEvent): Promise<void> {
    // Another registration's event goes to its own history.
    if (!isEventOf(event, this.options.name)) return;
    // A listener that threw would release the event's claim: record() never throws.
    await this.record({
      kind: 'outcome',
      phoneNumber: event.phoneNumber,
      owner: event.owner,
      method: event.method,
      requestId: event.requestId,
      status: event.event.replace('verification.', ''),
      cost: event.journeyCost,
      purpose: event.purpose,
    });
  }
}
