import { Inject, Injectable } from '@nestjs/common';
import { calendarDate, DAY_MS, utcDate } from '../core/clock.js';
import { errorText } from '../core/error-text.js';
import { toMajorUnits, toMinorUnits, type Money } from '../core/money.js';
import { chargedCost, type SessionRecord } from '../core/session-record.js';
import { isTestSession } from '../core/test-session.js';
import { VerificationOpsEventName, type LedgerDriftEvent } from '../core/verification-events.js';
import { isTerminal } from '../core/verification-status.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { LedgerOptions, ResolvedVerificationOptions } from '../options/verification.options.js';
import { storeBatch, type StoreOperation } from '../store/store-batch.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { LedgerKeys } from './ledger-keys.js';
import {
  CHARGED,
  figuresOf,
  LEDGER_COUNTS,
  ledgerCsv,
  minorOf,
  type LedgerCount,
  type LedgerDayReport,
  type LedgerRow,
} from './ledger-report.js';
import {
  LEDGER_DIMENSIONS,
  overflowOf,
  parseRowId,
  rowId,
  rowKeyOf,
  type LedgerRowKey,
} from './ledger-row.js';
import { UsageReads } from './usage-reads.js';
import { balanceStep, parseMark, type BalanceMark } from './ledger-balance.js';
import { ArgumentRangeError, PhoneVerificationError } from '../core/phone-verification.error.js';

/** A day is final (its sessions ended, its figures settled) this long after its midnight UTC ends. */
export const LEDGER_FINAL_AFTER_MS = 3_600_000;
/** A day still open is read from the API at most this often by the ledger; a final day, hourly. */
const OPEN_DAY_USAGE_AGE_MS = 60_000;
const FINAL_DAY_USAGE_AGE_MS = 3_600_000;
/** The all-time charge counter and the balance reading live this long (a longer gap starts afresh). */
const TOTAL_TTL_MS = 400 * DAY_MS;
const DEFAULT_CURRENCY = 'RUB';

type Transition = LedgerCount | typeof CHARGED;

/**
 * What the module expects the API to have charged, per UTC day (the day a session started, as
 * `GET /v1/usage` counts it), method and operator prefix, by the billing rules (`chargedCost`): a
 * per-attempt method once started, SMS, flash call and the bot once delivered, the reverse flash
 * call once verified. Rows keep sessions started, delivered, verified, expired and failed too.
 *
 * Kept in the store as integer counters that every instance increments (atomic, so concurrent
 * instances lose no count); each `(request_id, transition)` is claimed once (set-if-absent), so a
 * session seen by a webhook on one instance and a poll on another is counted once. A day holds at
 * most `maxRowsPerDay` rows (an atomic counter hands out their slots); a prefix past it is summed
 * under `other`. Test numbers' sessions are not counted. Counting never fails its caller.
 *
 * Reconciled with the API: a day's report compares its total with the day's `GET /v1/usage` (read
 * through UsageReads, shared with the spend cap); the balance watch's readings are compared with the
 * charges counted between them. A difference beyond `tolerance` emits `verification.ledger_drift`:
 * for a day once it is final (an hour after it ended), for the balance when two readings in a row
 * show more debited than counted (a charge the module learns of late is not a drift).
 */
@Injectable()
export class VerificationLedger {
  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    private readonly usage: UsageReads,
  ) {}

  /** Whether the ledger is kept (`ledger` given). */
  get enabled(): boolean {
    return this.options.ledger !== false;
  }

  /** @internal Counts what `record` shows that no instance counted yet (the tracker and the start call it). Never fails. */
  async count(record: SessionRecord): Promise<void> {
    const settings = this.options.ledger;
    if (!settings || isTestSession(record.requestId)) return;
    try {
      const charged = chargedCost(record);
      const chargedMinor = charged ? (toMinorUnits(charged.amount) ?? 0) : 0;
      const shown: Transition[] = ['started'];
      if (record.delivered === true) shown.push('delivered');
      if (isTerminal(record.status)) shown.push(record.status);
      if (chargedMinor > 0) shown.push(CHARGED);
      const ttl = retentionMs(settings);
      const claims = await storeBatch(
        this.store,
        shown.map(
          (t) =>
            ({
              op: 'setIfAbsent',
              key: LedgerKeys.counted(record.requestId, t),
              value: '1',
              ttlMs: ttl,
            }) as const,
        ),
      );
      const won = shown.filter((_, i) => claims[i]);
      if (won.length === 0) return;
      const day = utcDate(record.createdAt);
      const row = await this.#rowOf(day, rowKeyOf(record), settings);
      const adds: StoreOperation[] = won.map((t) => ({
        op: 'increment',
        key: LedgerKeys.figure(day, row, t),
        by: t === CHARGED ? chargedMinor : 1,
        ttlMs: ttl,
      }));
      if (won.includes(CHARGED)) {
        adds.push({ op: 'increment', key: LedgerKeys.chargedTotal, by: chargedMinor, ttlMs: TOTAL_TTL_MS });
        adds.push({ op: 'set', key: LedgerKeys.currency(day), value: charged!.currency, ttlMs: ttl });
      }
      await storeBatch(this.store, adds);
    } catch (error) {
      this.telemetry.logger.warn('ledger: a session transition could not be counted', {
        method: record.method,
        request_id: record.requestId,
        error: errorText(error),
      });
    }
  }

  /**
   * One UTC day (`YYYY-MM-DD` or a Date; default today): its rows and totals, the API's usage of the
   * day (read at most once a minute, hourly once the day is final) and the drift between the two.
   * A final day's drift beyond the tolerance emits `verification.ledger_drift` (once per figure).
   * Rejects with a RangeError for a date that is not a calendar date or is after today.
   */
  async report(date: string | Date = new Date(this.store.now())): Promise<LedgerDayReport> {
    const settings = this.#settings('report');
    const day = calendarDate('ledger.report', 'date', date);
    const now = this.store.now();
    if (day > utcDate(now))
      throw new ArgumentRangeError(`ledger.report: "date" is after today (${utcDate(now)})`);
    const final = now >= Date.parse(`${day}T00:00:00Z`) + DAY_MS + LEDGER_FINAL_AFTER_MS;
    const [rows, currency, usage] = await Promise.all([
      this.#rows(day),
      this.store.get(LedgerKeys.currency(day)),
      this.usage.recent(day, final ? FINAL_DAY_USAGE_AGE_MS : OPEN_DAY_USAGE_AGE_MS).catch(() => undefined),
    ]);
    const sums = Object.fromEntries([...LEDGER_COUNTS, CHARGED].map((f) => [f, 0])) as Record<
      Transition,
      number
    >;
    for (const { counts } of rows) for (const f of [...LEDGER_COUNTS, CHARGED] as const) sums[f] += counts[f];
    const driftMinor = usage ? usage.chargedMinor - sums[CHARGED] : null;
    const toleranceMinor = minorOf(settings.tolerance);
    const beyondTolerance = driftMinor !== null && Math.abs(driftMinor) > toleranceMinor;
    const report: LedgerDayReport = {
      date: day,
      currency: currency ?? usage?.currency ?? DEFAULT_CURRENCY,
      final,
      rows: rows.map(({ key, counts }): LedgerRow => ({ ...key, ...figuresOf(counts) })),
      totals: figuresOf(sums),
      usage: usage
        ? {
            charged: toMajorUnits(usage.chargedMinor),
            verifications: usage.verifications,
            verified: usage.verified,
            readAt: new Date(usage.at),
          }
        : null,
      drift: driftMinor === null ? null : toMajorUnits(driftMinor),
      tolerance: settings.tolerance,
      beyondTolerance,
    };
    if (final && beyondTolerance)
      await this.#announce('usage', day, sums[CHARGED], usage!.chargedMinor, report.currency);
    return report;
  }

  /** The day's report as CSV (see ledgerCsv: formula-like cells defused). Same date rules as `report`. */
  async csv(date?: string | Date): Promise<string> {
    return ledgerCsv(await this.report(date));
  }

  /**
   * A balance reading (the balance watch's): the fall since the last reading is compared with the
   * charges counted meanwhile. A rise (a top-up, a credit) only moves the mark. Never fails.
   */
  async balanceRead(balance: Money): Promise<void> {
    const settings = this.options.ledger;
    if (!settings || !Number.isFinite(balance.amount)) return;
    try {
      const [rawTotal, rawMark] = await Promise.all([
        this.store.get(LedgerKeys.chargedTotal),
        this.store.get(LedgerKeys.balance),
      ]);
      const now = this.store.now();
      const mark: BalanceMark = { amount: minorOf(balance.amount), charged: Number(rawTotal) || 0, at: now };
      const step = balanceStep(parseMark(rawMark), mark, minorOf(settings.tolerance));
      if (step.kind === 'suspect') {
        await this.store.set(LedgerKeys.balance, JSON.stringify(step.mark), TOTAL_TTL_MS);
        return;
      }
      if (step.kind === 'drift')
        await this.#announce('balance', utcDate(now), step.expected, step.debited, balance.currency);
      await this.store.set(LedgerKeys.balance, JSON.stringify(mark), TOTAL_TTL_MS);
    } catch (error) {
      this.telemetry.logger.warn('ledger: a balance reading could not be compared', {
        error: errorText(error),
      });
    }
  }

  /** Reconciles yesterday once it is final (the balance watch's tick calls it). Never fails. */
  async reconcileClosedDay(): Promise<void> {
    if (!this.enabled) return;
    const yesterday = this.store.now() - DAY_MS;
    if (this.store.now() < Math.floor(yesterday / DAY_MS) * DAY_MS + DAY_MS + LEDGER_FINAL_AFTER_MS) return;
    await this.report(utcDate(yesterday)).catch((error: unknown) =>
      this.telemetry.logger.warn('ledger: a closed day could not be reconciled', { error: errorText(error) }),
    );
  }

  #settings(where: string): Required<LedgerOptions> {
    const settings = this.options.ledger;
    if (!settings)
      throw new PhoneVerificationError(
        `ledger.${where}: the ledger is off (give the "ledger" option, {} for the defaults)`,
      );
    return settings;
  }

  /**
   * The row a session's figures go to, given a slot the first time the day sees it; past
   * `maxRowsPerDay` rows, its method's `other` row.
   */
  async #rowOf(day: string, key: LedgerRowKey, settings: Required<LedgerOptions>): Promise<string> {
    const id = rowId(key);
    if ((await this.store.get(LedgerKeys.rowClaim(day, id))) !== null) return id;
    const taken = Number(await this.store.get(LedgerKeys.rows(day))) || 0;
    const chosen = taken >= settings.maxRowsPerDay ? rowId(overflowOf(key)) : id;
    const ttl = retentionMs(settings);
    if (!(await this.store.setIfAbsent(LedgerKeys.rowClaim(day, chosen), '1', ttl))) return chosen;
    try {
      const { value } = await this.store.increment(LedgerKeys.rows(day), 1, ttl);
      await this.store.set(LedgerKeys.slot(day, value), chosen, ttl);
    } catch (error) {
      // Unclaimed again, so the next count gives the row its slot.
      await this.store.delete(LedgerKeys.rowClaim(day, chosen)).catch(() => undefined);
      throw error;
    }
    return chosen;
  }

  /** The day's rows with their counters, sorted by their dimensions. */
  async #rows(day: string): Promise<{ key: LedgerRowKey; counts: Record<Transition, number> }[]> {
    const taken = Math.max(0, Number(await this.store.get(LedgerKeys.rows(day))) || 0);
    const slots = await storeBatch(
      this.store,
      Array.from({ length: taken }, (_, i) => ({ op: 'get', key: LedgerKeys.slot(day, i + 1) }) as const),
    );
    const ids = [...new Set(slots.filter((s): s is string => s !== null))];
    const fields = [...LEDGER_COUNTS, CHARGED] as const;
    const values = await storeBatch(
      this.store,
      ids.flatMap((id) => fields.map((f) => ({ op: 'get', key: LedgerKeys.figure(day, id, f) }) as const)),
    );
    const rows = ids.flatMap((id, r) => {
      const key = parseRowId(id);
      if (!key) return [];
      const counts = Object.fromEntries(
        fields.map((f, i) => [f, counterValue(values[r * fields.length + i] ?? null)]),
      ) as Record<Transition, number>;
      return [{ key, counts }];
    });
    const name = (k: LedgerRowKey) => LEDGER_DIMENSIONS.map((d) => k[d]).join('\u0000');
    return rows.sort((a, b) => (name(a.key) < name(b.key) ? -1 : name(a.key) > name(b.key) ? 1 : 0));
  }

  /** Emits the drift once per figure across instances (the first to claim it). */
  async #announce(
    source: LedgerDriftEvent['source'],
    day: string,
    expectedMinor: number,
    chargedMinor: number,
    currency: string,
  ): Promise<void> {
    const settings = this.options.ledger as Required<LedgerOptions>;
    const driftMinor = chargedMinor - expectedMinor;
    const claimed = await this.store.setIfAbsent(
      LedgerKeys.drift(source, day, driftMinor),
      '1',
      retentionMs(settings),
    );
    if (!claimed) return;
    const payload: LedgerDriftEvent = {
      event: VerificationOpsEventName.ledgerDrift,
      source,
      date: day,
      expected: toMajorUnits(expectedMinor),
      charged: toMajorUnits(chargedMinor),
      drift: toMajorUnits(driftMinor),
      tolerance: settings.tolerance,
      currency,
    };
    this.telemetry.logger.warn('ledger drift: the API charged other than the billing rules say', {
      source,
      date: day,
      expected: payload.expected,
      charged: payload.charged,
      currency,
    });
    await this.telemetry.announce(payload);
  }
}

function retentionMs(settings: Required<LedgerOptions>): number {
  return settings.retentionDays * DAY_MS;
}

function counterValue(raw: string | null): number {
  const value = raw === null ? 0 : Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
