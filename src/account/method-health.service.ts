import { Inject, Injectable, Optional } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { nationalDestinationCode, operatorPrefixOf } from '../core/operator-prefix.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../core/verification-events.js';
import type { VerificationMethod } from '../core/verification-method.js';
import { DAY_MS } from '../core/clock.js';
import { errorText } from '../core/error-text.js';
import { SharedReads } from '../core/shared-reads.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { totalOf, type DayCounters } from './figure-counters.js';
import { dayName, callingCodeOf, emptySums, healthCells } from './method-figures.js';
import {
  DEMOTE_AFTER_MS,
  HEALTH_MIN_SESSIONS,
  HEALTH_WINDOW_MS,
  keptChange,
  nextHealth,
  ratesOf,
  verdictOf,
  type Health,
  type HealthState,
  type Rates,
  windowSince,
} from './method-health.js';
import { MethodStats } from './method-stats.service.js';

/** Days of figures a method's week is: the rates a recent window is judged against. */
export const HEALTH_WEEK_DAYS = 7;
/** How often one (method, operator prefix) is read again (module clock). */
export const HEALTH_READ_MS = 30_000;

/** One method's health on one operator prefix, as `methodHealth()` answers it. */
export interface MethodHealthReport {
  method: VerificationMethod;
  /** Calling code and national destination code (`+7985`). */
  prefix: string;
  state: HealthState;
  since: Date;
  /** Whose recent figures were judged: the prefix's own, or its country's while its own are too few. */
  level: 'operator' | 'country';
  recent: Rates;
  week: Rates;
}

interface Tracked extends Health {
  method: VerificationMethod;
  prefix: string;
  level: 'operator' | 'country';
  /** The level whose window set the state. */
  by?: 'operator' | 'country';
  /** When this instance's own window last gave a verdict (judgedAt counts a change taken over too). */
  ownAt?: number;
  /** Whether it took a kept change (adopt): else, with no verdict of its own, its state is only where it began. */
  took?: boolean;
  recent: Rates;
  week: Rates;
  readUntil: number;
  /** The counters as read (operator's, country's; their two newest days), oldest first, for the recent window. */
  reads: { at: number; cells: DayCounters[] }[];
}

/**
 * Keeps the health of each method on each operator prefix it was asked about (method-health.ts):
 * reads its health cells (healthCells: the operator's and its country's, all devices) every HEALTH_READ_MS, takes the
 * recent window from this instance's reads of HEALTH_WINDOW_MS ago (none older than two windows: after a longer
 * spell without a read, the window begins afresh), and emits
 * `verification.method_health` on a change (once across instances: a claim in the store). Per
 * instance, but for the change it keeps in the store, which an instance that has not judged for a window
 * adopts (`adopt`); a failed read keeps the health as it was. The read for operations: `report()`.
 */
@Injectable()
export class MethodHealthWatch {
  readonly #tracked = new Map<string, Tracked>();
  /** Each method's country cell as last read, shared by the country's prefixes (#sums). */
  readonly #countries = new SharedReads<DayCounters[]>(HEALTH_READ_MS);
  /** The kept change of each method and prefix this instance does not track, as `counted` last read it. */
  readonly #keptReads = new SharedReads<string | null>(HEALTH_READ_MS);

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly stats: MethodStats,
    private readonly telemetry: VerificationTelemetry,
    @Optional() private readonly emitter?: EventEmitter2,
  ) {}

  /** The method's health on the number's operator prefix, as last read (healthy when never read). */
  state(method: VerificationMethod, phoneNumber: string): HealthState {
    return this.#tracked.get(keyOf(method, phoneNumber))?.state ?? 'healthy';
  }

  /**
   * The method's health on the number's operator prefix as last read, read first when this instance never read
   * it (a journey started on another instance, or with a named method): the deployment's kept change is taken
   * then, as by a start; a read over HEALTH_READ_MS old gives way to a newer kept change (`counted`). Never fails.
   */
  known(method: VerificationMethod, phoneNumber: string): Promise<HealthState> {
    if (this.#tracked.has(keyOf(method, phoneNumber))) return this.counted(method, phoneNumber);
    return this.refresh(method, phoneNumber);
  }

  /**
   * The health a session of the method on the number's prefix is counted by: as this instance read it within
   * HEALTH_READ_MS, else the newer of its read and the change the deployment kept (another instance may have
   * judged since). That read judges nothing: the instance's own reads keep their pace.
   */
  async counted(method: VerificationMethod, phoneNumber: string): Promise<HealthState> {
    const key = keyOf(method, phoneNumber);
    const tracked = this.#tracked.get(key);
    const now = this.options.clock();
    if (tracked && now < tracked.readUntil) return tracked.state;
    const prefix = operatorPrefixOf(phoneNumber);
    // Read once per HEALTH_READ_MS, as the instance's own reads are: not once per start.
    const kept = await this.#keptReads.get(key, now, () => this.#kept(method, prefix));
    const change = kept === null ? null : keptChange(kept, now, KEPT_MS);
    if (tracked && (change === null || change.since <= tracked.since)) return tracked.state;
    return change?.state ?? 'healthy';
  }

  /** Reads the figures again when due, and answers the health. Never fails: a failed read is logged. */
  async refresh(method: VerificationMethod, phoneNumber: string): Promise<HealthState> {
    const key = keyOf(method, phoneNumber);
    const now = this.options.clock();
    const known = this.#tracked.get(key);
    if (known && now < known.readUntil) return known.state;
    const prefix = operatorPrefixOf(phoneNumber);
    const tracked: Tracked = known ?? {
      method,
      prefix,
      state: 'healthy',
      since: now,
      level: 'country',
      recent: ratesOf(emptySums()),
      week: ratesOf(emptySums()),
      readUntil: 0,
      reads: [],
    };
    tracked.readUntil = now + HEALTH_READ_MS;
    this.#tracked.set(key, tracked);
    try {
      const [cells, kept] = await Promise.all([
        this.#cells(method, phoneNumber, now),
        unjudged(tracked, now) ? this.#kept(method, prefix) : undefined,
      ]);
      // Neither judged nor taken: healthy since its first read, which may have come just before another's change.
      if (kept) adopt(tracked, kept, now, tracked.ownAt === undefined && !tracked.took);
      await this.#judge(tracked, cells, now);
    } catch (error) {
      this.telemetry.logger.warn('method health: the figures could not be read; the health stands', {
        method,
        error: errorText(error),
      });
    }
    return tracked.state;
  }

  /** The deployment's last change kept, or none when the store fails it: the figures are judged all the same. */
  async #kept(method: VerificationMethod, prefix: string): Promise<string | null> {
    try {
      return await this.store.get(healthKey(method, prefix, 'state'));
    } catch (error) {
      this.telemetry.logger.warn('method health: the kept change could not be read; judged without it', {
        method,
        error: errorText(error),
      });
      return null;
    }
  }

  /** Every method and operator prefix this instance judged, with its figures. */
  report(): MethodHealthReport[] {
    return [...this.#tracked.values()].map(({ method, prefix, state, since, level, recent, week }) => ({
      method,
      prefix,
      state,
      since: new Date(since),
      level,
      recent,
      week,
    }));
  }

  /**
   * The method's health cells for the number: its operator prefix's read now, its country's read once per
   * HEALTH_READ_MS (within its day) for all of the country's prefixes (a fresh prefix reads its own cell only; the
   * window a prefix judges the country's by may begin and end up to HEALTH_READ_MS early).
   */
  async #cells(method: VerificationMethod, phoneNumber: string, now: number): Promise<DayCounters[]> {
    const [operator, country] = healthCells(phoneNumber);
    const [own, countryCells] = await Promise.all([
      this.stats.cellDays(method, [operator], HEALTH_WEEK_DAYS),
      this.#countries.get(`${method}:${country}:${dayName(now)}`, now, () =>
        this.stats.cellDays(method, [country], HEALTH_WEEK_DAYS),
      ),
    ]);
    return [...own, ...countryCells];
  }

  async #judge(tracked: Tracked, cells: DayCounters[], now: number): Promise<void> {
    // A then-read more than a window before the window began (no read since: a quiet night, days without a user of
    // the prefix) would judge the hours or days since it as recent: the window starts afresh from this read.
    const then = tracked.reads
      .filter((read) => read.at <= now - HEALTH_WINDOW_MS && read.at > now - 2 * HEALTH_WINDOW_MS)
      .at(-1);
    tracked.reads = [
      ...(then ? [then] : []),
      ...tracked.reads.filter((read) => read.at > now - HEALTH_WINDOW_MS),
      { at: now, cells: cells.map(({ day, days }) => ({ day, days: days.slice(0, 2) })) },
    ];
    if (!then) return;
    // The operator's own window once it holds enough ended sessions, else its country's.
    const own = ratesOf(windowSince(cells[0]!, then.cells[0]!));
    const level = own.ended >= HEALTH_MIN_SESSIONS ? 0 : 1;
    const recent = level === 0 ? own : ratesOf(windowSince(cells[1]!, then.cells[1]!));
    const week = ratesOf(totalOf(cells[level]!.days));
    // A state the prefix's own window set is judged by it alone: the country's window, of other
    // prefixes' users, neither lifts it nor deepens it while the prefix's own is too thin.
    const setByOwn = tracked.state !== 'healthy' && tracked.by === 'operator';
    const verdict = level === 1 && setByOwn ? null : verdictOf(recent, week);
    const next = nextHealth(tracked, verdict, now);
    const previous = tracked.state;
    const judged = level === 0 ? 'operator' : 'country';
    Object.assign(tracked, { level: judged, recent, week });
    // A retry (no verdict) keeps the level that set the state.
    if (verdict !== null)
      Object.assign(tracked, { judgedAt: now, ownAt: now }, next.state === previous ? {} : { by: judged });
    if (next.state === previous) return;
    Object.assign(tracked, next);
    await this.#announce(tracked, previous, now);
    const { state, since, by } = tracked;
    const kept = JSON.stringify({ state, since, by });
    await this.store
      .set(healthKey(tracked.method, tracked.prefix, 'state'), kept, KEPT_MS)
      .catch((error: unknown) => {
        this.telemetry.logger.warn('method health: the change could not be kept in the store', {
          method: tracked.method,
          error: errorText(error),
        });
      });
  }

  /**
   * Whether this instance announces `change` of the method on the prefix: the first to claim it, while no
   * other change was announced since (the claim lasts DEMOTE_AFTER_MS; every instance reads the figures
   * within HEALTH_READ_MS of the others, each on its own users' starts). An announced change ends the others'
   * claims: the next change of another kind is news however soon it comes. A claim the store fails to
   * answer (its node down, the figures' up) is announced all the same: a change said twice, never not said.
   */
  async #claim(method: VerificationMethod, prefix: string, change: string): Promise<boolean> {
    try {
      if (!(await this.store.setIfAbsent(healthKey(method, prefix, change), '1', DEMOTE_AFTER_MS)))
        return false;
      await Promise.all(
        CHANGES.filter((other) => other !== change).map((other) =>
          this.store.delete(healthKey(method, prefix, other)),
        ),
      );
    } catch (error) {
      this.telemetry.logger.warn('method health: the change could not be claimed; it is announced', {
        method,
        error: errorText(error),
      });
    }
    return true;
  }

  async #announce(tracked: Tracked, previous: HealthState, now: number): Promise<void> {
    const { method, prefix, state, level, recent, week } = tracked;
    this.telemetry.logger.warn('method health changed', { method, prefix, state, previous, level });
    if (!this.emitter || !(await this.#claim(method, prefix, `${previous}>${state}`))) return;
    const event: MethodHealthEvent = {
      event: VerificationOpsEventName.methodHealth,
      method,
      prefix,
      state,
      previous,
      level,
      recent: { completion: recent.completion, delivery: recent.delivery },
      week: { completion: week.completion, delivery: week.delivery },
      at: new Date(now),
      ...(this.options.name === undefined ? {} : { registration: this.options.name }),
    };
    // Not awaited: the read that judged the change is a user's start (auto), which a slow alerting listener
    // must not hold.
    let emitted: Promise<unknown>;
    try {
      emitted = this.emitter.emitAsync(event.event, event);
    } catch (error) {
      emitted = Promise.reject(error);
    }
    void emitted.catch((error: unknown) => {
      this.telemetry.logger.warn('a listener of a method health event failed', {
        error: error instanceof Error ? error.name : 'unknown',
      });
    });
  }
}

/** Every change nextHealth makes (method-health.ts). */
const CHANGES = [
  'healthy>degraded',
  'degraded>demoted',
  'degraded>healthy',
  'demoted>degraded',
  'demoted>healthy',
];

/** The method's health keys on the prefix: each change's claim (`healthy>degraded`), and `state`, the last change kept. */
const healthKey = (method: VerificationMethod, prefix: string, of: string) =>
  `stats-health:{${method}:${prefix}}:${of}`;
/** As long as the figures it was judged on. */
const KEPT_MS = HEALTH_WEEK_DAYS * DAY_MS;

/** Whether the instance has given no verdict of its own for a window: what it holds is no fresher than a new one's. */
function unjudged(tracked: Tracked, now: number): boolean {
  return tracked.ownAt === undefined || now - tracked.ownAt >= HEALTH_WINDOW_MS;
}

/**
 * An instance that has not judged the method on the prefix for a window (booted since, never asked, or none of
 * its users had that operator) takes the deployment's last change, if newer than its own: its own next verdict
 * is a window away, and an outage does not wait for it. It starts that window afresh (its older reads would
 * judge the hours before the change), and it has judged nothing itself, so a degraded state's quiet spell counts
 * from now. A record it cannot read as a change (not an object, an unknown state, dated ahead of its clock or a
 * week or more before it) is left aside.
 */
function adopt(tracked: Tracked, kept: string, now: number, fresh: boolean): void {
  const change = keptChange(kept, now, KEPT_MS);
  if (change === null || (!fresh && change.since <= tracked.since)) return;
  Object.assign(tracked, { ...change, judgedAt: now, reads: [], took: true });
}

function keyOf(method: VerificationMethod, phoneNumber: string): string {
  return `${method}:${callingCodeOf(phoneNumber)}~${nationalDestinationCode(phoneNumber)}`;
}
