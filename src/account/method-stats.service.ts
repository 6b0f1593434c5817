import { isTestSession } from '../core/test-session.js';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { DAY_MS } from '../core/clock.js';
import type { MomentCounts } from '../core/fallback-moment.js';
import type { DeviceHint, JourneyStep } from '../core/journey.js';
import type { MethodSamples, MethodSamplesByMethod } from '../core/method-ranking.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS, type VerificationMethod } from '../core/verification-method.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { counterKey, dayCounters, totalOf, type DayCounters } from './figure-counters.js';
import {
  CALLERS_FIELD,
  countryKey,
  countsOf,
  isCellField,
  LEFT_FIELD,
  dayName,
  DEFAULT_STATS_WINDOW_DAYS,
  leaveOutOfShares,
  momentGroup,
  OTHER_METHOD,
  shownTransitions,
  STATS_RETENTION_DAYS,
  storedMethod,
  toFigures,
  UNPROVEN_FIELD,
  windowDays,
  type Counts,
  type MethodStatsQuery,
  type MethodStatsReport,
  type MethodTransition,
  type Sums,
} from './method-figures.js';
import { earlierEndCounts, endInVerifiedJourney, isEnd, withoutEnd } from './journey-ends.js';
import { errorText } from '../core/error-text.js';
import { FigureEvidence, type Admission, type FigureGivers } from './figure-evidence.js';

const COUNTER_TTL_MS = STATS_RETENTION_DAYS * DAY_MS;
/** The counters summed over every country. */
const ALL_COUNTRIES = 'all';
const CURRENCY_KEY = 'stats:currency';
const DEFAULT_CURRENCY = 'RUB';
/** How long counts wait in the instance before they are added to the store's counters (see `flush`). */
export const STATS_FLUSH_INTERVAL_MS = 1_000;
const REPORTED_METHODS: readonly string[] = [...VERIFICATION_METHODS, OTHER_METHOD];
/**
 * Per method and per calling code of the number: sessions started, delivered, verified, expired and
 * failed, money charged and time to verify, kept in the store (shared across instances) as day
 * counters `stats:{day}:{method}:{cc}:{field}` (and `…:all:…` over every country) for 35 days. A
 * session's figures all go to the day it started, so rates over a window never count an outcome
 * without its start.
 *
 * Each `(request_id, transition)` is counted once across instances: it is claimed in the store
 * (set-if-absent) when it is counted. `tally` is called by the start path and by the tracker (its
 * first sight of a delivery, its claim of an outcome's event); it counts whatever the record shows
 * that was not counted yet, so a session adopted after an in-doubt start still counts as started.
 * Counting never fails the caller: a store error loses that count (once at most, never twice), logged.
 *
 * Claimed counts wait in the instance up to `STATS_FLUSH_INTERVAL_MS`, then go to the store's counters
 * in one batch (`flush`; else eight counter writes an outcome). `figures` on one instance includes its
 * own counts at once (it flushes first), other instances' within a second; a crash loses at most the
 * last second's counts; the module flushes at shutdown.
 */
@Injectable()
export class MethodStats implements OnModuleDestroy {
  /** Claimed counts not yet in the store: by day, method and country (`counterKey` less its field), then field. */
  #pending = new Map<string, Map<string, number>>();
  /** The currency of the charges in `#pending`. */
  #pendingCurrency: string | undefined;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Batches being written, and tallies in flight (first): `flush` waits for them, so a read after it sees them. */
  readonly #writing = new Set<Promise<void>>();
  readonly #tallying = new Set<Promise<void>>();
  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    /** What a session's counts are admitted on (a provider: ACCOUNT_PROVIDERS). */
    private readonly evidence: FigureEvidence,
  ) {}

  static claimKey(requestId: string, transition: MethodTransition): string {
    return `stats-counted:{${requestId}}:${transition}`;
  }

  /**
   * Counts what the record shows (started; delivered; its outcome) that no instance counted yet, as
   * FigureEvidence admits it: not a start the pumping defence suspected, a number's first with the
   * method that day, within its givers' day shares; an unverified end no real user gave is `unproven`;
   * one started while its method was `unhealthy` on its prefix counts in its health cells only.
   * `caller` (owner or client key) is counted once per day and method (`cost_per_success`'s
   * `minCallers`); `device`, the start's hint, is remembered for the session's later counts, and so
   * are the journey's `earlier` steps (a switch's): when this one verifies, they are ended then
   * (#endEarlier). The start path does not wait for it: `flush` and every read of the figures do.
   */
  tally(...args: Parameters<MethodStats['count']>): Promise<void> {
    const tallying = this.count(...args).finally(() => this.#tallying.delete(tallying));
    this.#tallying.add(tallying);
    return tallying;
  }

  private async count(
    record: SessionRecord,
    caller?: string,
    device?: DeviceHint,
    { unhealthy, ...givers }: Omit<FigureGivers, 'caller'> & { unhealthy?: boolean | Promise<boolean> } = {},
    earlier: readonly JourneyStep[] = [],
  ): Promise<void> {
    // A test number's session says nothing about a method's real success or price.
    if (record.suspected || isTestSession(record.requestId)) return;
    try {
      const admitted = await this.evidence.admitted(record, device, { ...givers, caller }, await unhealthy);
      if (admitted === false) return;
      // The start's claim is its admission's entry (FigureEvidence.admitted); later transitions have their own.
      const later = shownTransitions(record).filter((transition) => transition !== 'started');
      const [claimed, ends] = await Promise.all([
        this.#claim(record, later),
        later.some(isEnd) ? this.evidence.claimEnd(record.requestId, record) : true,
        admitted.started ? this.evidence.rememberEarlier(record, earlier) : undefined,
      ]);
      const won: MethodTransition[] = later.filter((_, i) => claimed[i]);
      if (admitted.started) won.unshift('started');
      if (won.length === 0) return;
      // Its end was counted already, when a later step verified its journey: what it charged still counts.
      const counts = withoutEnd(countsOf(record, won, this.store.now(), admitted.device), !ends);
      await this.#journeyOutcome(record, counts, admitted);
      // A cell (and moment) its network's share left this session out of is not counted in.
      leaveOutOfShares(counts, record.phoneNumber, admitted.device, admitted.outOfCells);
      if (
        caller !== undefined &&
        won.includes('started') &&
        (await this.evidence.firstCaller(record, caller))
      )
        counts.adds.push([CALLERS_FIELD, 1]);
      this.#add(counts);
      this.#report(counts);
    } catch (error) {
      this.#lost(record, error);
    }
  }

  /** A status answer of `record` (a page following it: evidence for its unverified end); never fails its caller. */
  async followed(record: SessionRecord): Promise<void> {
    try {
      await this.evidence.followed(record);
    } catch (error) {
      this.#lost(record, error);
    }
  }

  /** What the policy ranks by, per method: sessions ended, less `unproven` (as `started`), verified, callers. */
  async learningSamples(days = DEFAULT_STATS_WINDOW_DAYS): Promise<MethodSamplesByMethod> {
    const sums = await Promise.all(REPORTED_METHODS.map((m) => this.#sum(m, ALL_COUNTRIES, days)));
    const samples: Record<string, MethodSamples> = {};
    for (const [i, { verified, expired, failed, unproven, callers }] of sums.entries()) {
      const ended = verified + expired + failed - unproven;
      if (ended > 0) samples[REPORTED_METHODS[i]!] = { started: ended, verified, callers };
    }
    return samples;
  }

  /** The figures of each method over the last `days` days, optionally for one country. */
  async figures(query: MethodStatsQuery = {}): Promise<MethodStatsReport> {
    const days = windowDays(query.days);
    const country = query.country === undefined ? ALL_COUNTRIES : countryKey(query.country);
    // The currency is read after this instance's counts are written: else a first read names the default.
    await this.flush();
    const [currency, perMethod] = await Promise.all([
      this.store.get(CURRENCY_KEY),
      Promise.all(REPORTED_METHODS.map((method) => this.#sum(method, country, days))),
    ]);
    const report: MethodStatsReport = {};
    REPORTED_METHODS.forEach((method, i) => {
      const sums = perMethod[i]!;
      if (sums.started > 0) report[method] = toFigures(sums, currency ?? DEFAULT_CURRENCY);
    });
    return report;
  }

  /**
   * Started, ended, left and the time-to-verify histogram (per TIME_TO_VERIFY_BUCKETS_MS bucket) over `days` of
   * one method's sessions informing the fallback moment, of one calling code and device hint (undefined: none).
   */
  async timeToVerify(
    method: VerificationMethod,
    callingCode: string,
    device: DeviceHint | undefined,
    days: number,
  ): Promise<MomentCounts> {
    const { started, verified, expired, failed, left, buckets } = await this.#sum(
      storedMethod(method),
      momentGroup(callingCode, device),
      days,
    );
    // Steps left for a step that verified their journey are counted neither expired nor failed there.
    return { started, ended: verified + expired + failed, left, buckets };
  }

  /** A session's end in the figures: a verified journey's (journey-ends.ts), else as proven (FigureEvidence). */
  async #journeyOutcome(record: SessionRecord, counts: Counts, admitted: Admission): Promise<void> {
    if (counts.transitions.includes('verified')) {
      await this.evidence.verified(record, admitted);
      await this.#endEarlier(record);
      return;
    }
    if (!counts.transitions.includes('expired') && !counts.transitions.includes('failed')) return;
    const verifiedBy = await this.evidence.verifiedStep(record);
    if (verifiedBy !== null) return endInVerifiedJourney(counts, record.method, verifiedBy);
    const others = counts.adds.filter(([field]) => field !== 'expired' && field !== 'failed');
    // No real user's end: out of what the policy learns (the moment's figures: neither ended nor pending).
    const proof = await this.evidence.proven(record, admitted);
    if (!proof.ranking) counts.adds.push([UNPROVEN_FIELD, 1]);
    if (!proof.moment) counts.momentAdds = [...others, [LEFT_FIELD, 1]];
  }

  /** The journey's steps switched away from end when a later one verifies it (earlierEndCounts), each once. */
  async #endEarlier(record: SessionRecord): Promise<void> {
    const steps = await this.evidence.earlierSteps(record);
    const won = await Promise.all(steps.map((step) => this.evidence.claimEnd(step.requestId, record)));
    for (const [i, step] of steps.entries()) {
      if (!won[i]) continue;
      const counts = earlierEndCounts(record, step, step.admitted.device, this.store.now());
      leaveOutOfShares(counts, record.phoneNumber, step.admitted.device, step.admitted.outOfCells);
      this.#add(counts);
      this.#report(counts);
    }
  }

  #claim(record: SessionRecord, transitions: MethodTransition[]): Promise<boolean[]> {
    const ttl = this.evidence.claimTtl(record);
    return Promise.all(
      transitions.map((transition) =>
        this.store.setIfAbsent(MethodStats.claimKey(record.requestId, transition), '1', ttl),
      ),
    );
  }

  /** Adds the counts to the batch for the store: the day's counters of the country, of all, and for the fallback moment. */
  #add(counts: Counts): void {
    const { day, method, country } = counts;
    const groups: [string, [string, number][]][] = [
      [country, counts.adds],
      [ALL_COUNTRIES, counts.adds],
    ];
    if (counts.momentGroup !== undefined) groups.push([counts.momentGroup, counts.momentAdds ?? counts.adds]);
    const cellAdds = counts.adds.filter(([field]) => isCellField(field));
    for (const cell of counts.cells) groups.push([cell, cellAdds]);
    for (const [cc, adds] of groups) {
      const group = counterKey(day, method, cc, '');
      let pending = this.#pending.get(group);
      if (pending === undefined) this.#pending.set(group, (pending = new Map()));
      for (const [field, by] of adds) pending.set(field, (pending.get(field) ?? 0) + by);
    }
    if (counts.charged) this.#pendingCurrency = counts.charged.currency;
    this.#flushTimer ??= setTimeout(() => void this.flush(), STATS_FLUSH_INTERVAL_MS).unref();
  }

  /**
   * Adds the counts waiting in this instance to the store's counters, and waits for batches already
   * being written. A batch the store refuses is lost (logged), like a count whose claim failed.
   */
  async flush(): Promise<void> {
    await Promise.all(this.#tallying);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#pending.size > 0) {
      const batch = this.#pending;
      const currency = this.#pendingCurrency;
      this.#pending = new Map();
      this.#pendingCurrency = undefined;
      const writing = this.#write(batch, currency).finally(() => this.#writing.delete(writing));
      this.#writing.add(writing);
    }
    await Promise.all(this.#writing);
  }

  async onModuleDestroy(): Promise<void> {
    await this.flush();
  }

  async #write(batch: Map<string, Map<string, number>>, currency: string | undefined): Promise<void> {
    const counters = [...batch].flatMap(([group, fields]) =>
      [...fields].map(([field, by]) => [group + field, by] as const),
    );
    try {
      await Promise.all([
        ...counters.map(([key, by]) => this.store.increment(key, by, COUNTER_TTL_MS)),
        ...(currency === undefined ? [] : [this.store.set(CURRENCY_KEY, currency, COUNTER_TTL_MS)]),
      ]);
    } catch (error) {
      this.telemetry.logger.warn('method figures: counts could not be added to the store', {
        counters: counters.length,
        error: errorText(error),
      });
    }
  }

  /** Prometheus counts what this instance counted in the store (so instances add up to the figures). */
  #report(counts: Counts): void {
    for (const transition of counts.transitions)
      this.telemetry.metrics.methodTransition(counts.method, counts.country, transition);
    if (counts.charged) this.telemetry.metrics.methodCharged(counts.method, counts.charged);
    if (counts.timeToVerifyMs !== undefined)
      this.telemetry.metrics.timeToVerify(counts.method, counts.timeToVerifyMs);
  }

  #lost(record: SessionRecord, error: unknown): void {
    this.telemetry.logger.warn('method figures: a session transition could not be counted', {
      method: record.method,
      request_id: record.requestId,
      error: errorText(error),
    });
  }

  /** One method's counters of a group over the last `days` days (windowDays), once this instance's are in the store. */
  async #days(method: string, group: string, days: number | undefined): Promise<DayCounters> {
    const length = windowDays(days);
    await this.flush();
    const day = Math.floor(this.store.now() / DAY_MS);
    const names = Array.from({ length }, (_, i) => dayName((day - i) * DAY_MS));
    return { day, days: await dayCounters(this.store, method, group, names) };
  }

  async #sum(method: string, group: string, days: number | undefined): Promise<Sums> {
    return totalOf((await this.#days(method, group, days)).days);
  }

  /** One method's figures in each of `cells` (figureCells) over the last `days` days: what OperatorFigures pools. */
  cellSums(method: VerificationMethod, cells: readonly string[], days: number): Promise<Sums[]> {
    return Promise.all(cells.map((cell) => this.#sum(storedMethod(method), cell, days)));
  }

  /** cellSums day by day: what a window that crosses a UTC midnight is told from (MethodHealthWatch). */
  cellDays(method: VerificationMethod, cells: readonly string[], days: number): Promise<DayCounters[]> {
    return Promise.all(cells.map((cell) => this.#days(storedMethod(method), cell, days)));
  }
}
