import { isTestSession } from '../core/test-session.js';
import { Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { DAY_MS } from '../core/clock.js';
import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import { cutOffBySwitch, type MomentCounts } from '../core/fallback-moment.js';
import { isDeviceHint, type DeviceHint } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS, type VerificationMethod } from '../core/verification-method.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import {
  bucketField,
  CALLERS_FIELD,
  CHARGED_FIELD,
  countryKey,
  LEFT_FIELD,
  countsOf,
  dayName,
  momentGroup,
  OTHER_METHOD,
  shownTransitions,
  STATS_RETENTION_DAYS,
  statsNumberKey,
  storedMethod,
  toFigures,
  windowDays,
  type Counts,
  type MethodStatsQuery,
  type MethodStatsReport,
  type MethodTransition,
  type Sums,
} from './method-figures.js';
import { errorText } from '../core/error-text.js';

const COUNTER_TTL_MS = STATS_RETENTION_DAYS * DAY_MS;
/** A claim outlives its session by this much (as the tracker's event claims). */
const CLAIM_RETENTION_MS = DAY_MS;
/** The counters summed over every country. */
const ALL_COUNTRIES = 'all';
const CURRENCY_KEY = 'stats:currency';
const DEFAULT_CURRENCY = 'RUB';
const BUCKET_COUNT = TIME_TO_VERIFY_BUCKETS_MS.length + 1;
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
 * Counting never fails the caller: a store error loses that count (at most once, never twice) and is
 * logged.
 *
 * The counts an instance claimed wait in it for up to `STATS_FLUSH_INTERVAL_MS` and are then added to
 * the store's counters in one batch (`flush`): an outcome would otherwise cost eight counter writes
 * (four fields, by country and in all), a busy webhook route eight times its own store work. So
 * `figures` on one instance includes its own counts at once (it flushes first) and other instances'
 * within a second; a crash loses at most the last second's counts; the module flushes at shutdown.
 */
@Injectable()
export class MethodStats implements OnModuleDestroy {
  /**
   * Claimed counts not yet in the store: by day, method and country (`counterKey` without its field),
   * then by field. A count adds to two such groups, the fields are a few fixed names.
   */
  #pending = new Map<string, Map<string, number>>();
  /** The currency of the charges in `#pending`. */
  #pendingCurrency: string | undefined;
  #flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** Batches being written; `flush` waits for them too, so a read after it sees them. */
  readonly #writing = new Set<Promise<void>>();

  constructor(
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly keys: { dataKeys: { digest(v: string): string } },
  ) {}

  static claimKey(requestId: string, transition: MethodTransition): string {
    return `stats-counted:{${requestId}}:${transition}`;
  }

  static counterKey(day: string, method: string, country: string, field: string): string {
    return `stats:${day}:${method}:${country}:${field}`;
  }

  /**
   * Counts what the record shows (started; delivered; its outcome) that no instance counted yet.
   * Figures an attacker cannot steer: a session whose start the pumping defence suspected is left
   * out, and so is every session of a number after its first with the method that day (abandoned
   * starts repeated on a few numbers do not sink a method's rate). `caller` (the start path's owner
   * or client key) is counted once per day and method: `cost_per_success` trusts a rate only from
   * enough distinct callers. `device` (the start's hint, given by the start path and the switch) is
   * remembered with the session's first count, so its later counts go to the same device's figures.
   */
  async tally(record: SessionRecord, caller?: string, device?: DeviceHint): Promise<void> {
    // A test number's session says nothing about a method's real success or price.
    if (record.suspected || isTestSession(record.requestId)) return;
    try {
      const admitted = await this.#admitted(record, device);
      if (admitted === false) return;
      const shown = shownTransitions(record);
      const claimed = await this.#claim(record, shown);
      const won = shown.filter((_, i) => claimed[i]);
      if (won.length === 0) return;
      const counts = countsOf(record, won, this.store.now(), admitted.device);
      await this.#journeyOutcome(record, counts);
      if (caller !== undefined && won.includes('started') && (await this.#firstCaller(record, caller)))
        counts.adds.push([CALLERS_FIELD, 1]);
      this.#add(counts);
      this.#report(counts);
    } catch (error) {
      this.#lost(record, error);
    }
  }

  /** The figures of each method over the last `days` days, optionally for one country. */
  async figures(query: MethodStatsQuery = {}): Promise<MethodStatsReport> {
    const days = windowDays(query.days);
    const country = query.country === undefined ? ALL_COUNTRIES : countryKey(query.country);
    await this.flush();
    const today = Math.floor(this.store.now() / DAY_MS) * DAY_MS;
    const dayNames = Array.from({ length: days }, (_, i) => dayName(today - i * DAY_MS));
    const [currency, perMethod] = await Promise.all([
      this.store.get(CURRENCY_KEY),
      Promise.all(REPORTED_METHODS.map((method) => this.#sum(method, country, dayNames))),
    ]);
    const report: MethodStatsReport = {};
    REPORTED_METHODS.forEach((method, i) => {
      const sums = perMethod[i]!;
      if (sums.started > 0) report[method] = toFigures(sums, currency ?? DEFAULT_CURRENCY);
    });
    return report;
  }

  /**
   * Sessions started, ended and left, and the time-to-verify histogram (counts per TIME_TO_VERIFY_BUCKETS_MS bucket)
   * over the last `days` days of one method's counted sessions that inform the fallback moment (core/fallback-moment.ts),
   * with numbers of one calling code, started with one device hint (undefined: none).
   */
  async timeToVerify(
    method: VerificationMethod,
    callingCode: string,
    device: DeviceHint | undefined,
    days: number,
  ): Promise<MomentCounts> {
    await this.flush();
    const today = Math.floor(this.store.now() / DAY_MS) * DAY_MS;
    const dayNames = Array.from({ length: windowDays(days) }, (_, i) => dayName(today - i * DAY_MS));
    const { started, verified, expired, failed, left, buckets } = await this.#sum(
      storedMethod(method),
      momentGroup(callingCode, device),
      dayNames,
    );
    // Steps left for a step that verified their journey are counted neither expired nor failed there.
    return { started, ended: verified + expired + failed, left, buckets };
  }

  /**
   * Whether the session is the first of its number with its method on its day, and the device hint
   * it started with (null: none): decided once per session and remembered, so later transitions
   * follow the start's decision. False when it is not counted.
   */
  async #admitted(
    record: SessionRecord,
    device: DeviceHint | undefined,
  ): Promise<false | { device: DeviceHint | null }> {
    const decided = `stats-admitted:{${record.requestId}}`;
    const known = await this.store.get(decided);
    if (known !== null) return admission(known);
    const ttl = Math.max(record.expiresAt - this.store.now(), 0) + CLAIM_RETENTION_MS;
    const numberKey = statsNumberKey(record, this.keys.dataKeys.digest(record.phoneNumber));
    const first =
      (await this.store.setIfAbsent(numberKey, record.requestId, this.#untilDayEnds(record))) ||
      (await this.store.get(numberKey)) === record.requestId;
    const decision = first ? `1${device === undefined ? '' : `:${device}`}` : '0';
    await this.store.set(decided, decision, ttl);
    return admission(decision);
  }

  /**
   * A journey verified by one step says nothing of how its steps typed in the page would have ended:
   * a user verified by a late reverse call leaves the code of the method they switched to untyped.
   * Such a step ending unverified is taken out of its method's moment figures (counted as `left`,
   * not as expired or failed), or a method tried after another would look as if its users gave up.
   */
  async #journeyOutcome(record: SessionRecord, counts: Counts): Promise<void> {
    const key = `stats-journey-verified:{${record.journeyId ?? record.requestId}}`;
    if (counts.transitions.includes('verified'))
      await this.store.set(key, '1', Math.max(record.expiresAt - this.store.now(), 0) + CLAIM_RETENTION_MS);
    else if (
      counts.momentGroup !== undefined &&
      cutOffBySwitch(record.method) &&
      (counts.transitions.includes('expired') || counts.transitions.includes('failed')) &&
      (await this.store.get(key)) !== null
    )
      counts.momentAdds = [
        ...counts.adds.filter(([field]) => field !== 'expired' && field !== 'failed'),
        [LEFT_FIELD, 1],
      ];
  }

  /** Whether this is the caller's first counted start of the method on the session's day. */
  #firstCaller(record: SessionRecord, caller: string): Promise<boolean> {
    const key = `stats-caller:{${dayName(record.createdAt)}:${storedMethod(record.method)}:${this.keys.dataKeys.digest(caller)}}`;
    return this.store.setIfAbsent(key, '1', this.#untilDayEnds(record));
  }

  /** A per-day claim lasts until the session's day ends (and a minute for clocks that disagree). */
  #untilDayEnds(record: SessionRecord): number {
    const dayEnds = (Math.floor(record.createdAt / DAY_MS) + 1) * DAY_MS;
    return Math.max(dayEnds - this.store.now(), 0) + 60_000;
  }

  #claim(record: SessionRecord, transitions: MethodTransition[]): Promise<boolean[]> {
    const ttl = Math.max(record.expiresAt - this.store.now(), 0) + CLAIM_RETENTION_MS;
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
    for (const [cc, adds] of groups) {
      const group = MethodStats.counterKey(day, method, cc, '');
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

  /** One method's counters over the days; a day without starts is not read further. */
  async #sum(method: string, country: string, days: string[]): Promise<Sums> {
    const key = (day: string, field: string) => MethodStats.counterKey(day, method, country, field);
    const startedByDay = await Promise.all(days.map((day) => this.#read(key(day, 'started'))));
    const active = days.filter((_, i) => startedByDay[i]! > 0);
    const fields = [
      'delivered',
      'verified',
      'expired',
      'failed',
      CHARGED_FIELD,
      CALLERS_FIELD,
      LEFT_FIELD,
      ...Array.from({ length: BUCKET_COUNT }, (_, i) => bucketField(i)),
    ];
    const values = await Promise.all(
      active.map((day) => Promise.all(fields.map((field) => this.#read(key(day, field))))),
    );
    const total = (field: string) =>
      values.reduce((sum, dayValues) => sum + dayValues[fields.indexOf(field)]!, 0);
    return {
      started: startedByDay.reduce((sum, value) => sum + value, 0),
      delivered: total('delivered'),
      verified: total('verified'),
      expired: total('expired'),
      failed: total('failed'),
      chargedMinor: total(CHARGED_FIELD),
      callers: total(CALLERS_FIELD),
      left: total(LEFT_FIELD),
      buckets: Array.from({ length: BUCKET_COUNT }, (_, i) => total(bucketField(i))),
    };
  }

  async #read(key: string): Promise<number> {
    const raw = await this.store.get(key);
    const value = raw === null ? 0 : Number(raw);
    return Number.isSafeInteger(value) && value > 0 ? value : 0;
  }
}

/** A remembered admission (`1`, `1:desktop`, `0`): counted or not, and the start's device hint. */
function admission(decision: string): false | { device: DeviceHint | null } {
  if (!decision.startsWith('1')) return false;
  const device = decision.slice(2);
  return { device: isDeviceHint(device) ? device : null };
}
