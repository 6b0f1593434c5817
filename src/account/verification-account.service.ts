import { Injectable } from '@nestjs/common';
import type { Money, Prices, UsageQuery, UsageSummary, VerificationMethod } from '../api/api.types.js';
import { normalizeMethod } from '../api/method-names.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import type { MethodStatsQuery, MethodStatsReport } from './method-figures.js';
import { MethodStats } from './method-stats.service.js';
import { MethodHealthWatch, type MethodHealthReport } from './method-health.service.js';
import { PriceBook } from './price-book.js';
import { calendarDate } from '../core/clock.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

/**
 * Server-side reads of the account for the host: balance, usage, prices and what each method costs
 * per verified user (`methodStats`). Prices come from the module's price book (PriceBook): read
 * from the API, cached for `pricesTtlMs` (default 10 minutes) on the module's clock; when a refresh
 * fails the last prices are served and the failure logged. Never exposed to frontends.
 */
@Injectable()
export class VerificationAccountService {
  #balanceInflight: Promise<Money> | undefined;

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    private readonly api: VerificationApiClient,
    private readonly book: PriceBook,
    private readonly stats: MethodStats,
    private readonly health: MethodHealthWatch,
  ) {}

  /** The current prepaid balance (`GET /v1/balance`); concurrent callers share one request. */
  getBalance(): Promise<Money> {
    this.#balanceInflight ??= this.api
      .getBalance()
      .then((b) => b.balance)
      .finally(() => (this.#balanceInflight = undefined));
    return this.#balanceInflight;
  }

  /**
   * Usage over an inclusive date range (`YYYY-MM-DD` or Date; the API's default range when both are
   * omitted). `byMethod` is keyed by canonical method names (`msgr1` on the wire is `msgr1_otp`).
   */
  async getUsage(query: UsageQuery = {}): Promise<UsageSummary> {
    const from = checkDate('from', query.from);
    const to = checkDate('to', query.to);
    if (from !== undefined && to !== undefined && from > to)
      throw new ArgumentRangeError(`getUsage: "from" (${from}) is after "to" (${to})`);
    return this.api.getUsage({ from, to });
  }

  /** Per-method prices, cached for `pricesTtlMs`. */
  async getPrices(): Promise<Prices> {
    return (await this.book.fetch()).prices;
  }

  /**
   * The price list `getPrices` holds while it is younger than `pricesTtlMs`, without asking the API;
   * undefined when the next `getPrices` would ask.
   */
  cachedPrices(): Prices | undefined {
    return this.book.current()?.prices;
  }

  /**
   * What a verification with `method` would cost now, from the prices (`msgr1` accepted for
   * `msgr1_otp`), or null when the account has no price for it (for example a method not enabled).
   */
  async estimateCost(method: VerificationMethod): Promise<Money | null> {
    const wanted = normalizeMethod(method);
    const { prices } = await this.getPrices();
    const entry = prices.find((p) => p.method === wanted);
    return entry ? { ...entry.price } : null;
  }

  /**
   * What each method did over the last `days` days (default 30, at most 35; UTC days on the module
   * clock, today included), for the host's dashboard: per method that started a session, the
   * sessions `started`, `delivered` (the code or call went out), `verified`, `expired` and `failed`,
   * `verifiedRate` (verified ÷ started), `medianTimeToVerifyMs` (estimated from buckets of 5 s to
   * 10 min), `charged` (money the API debited by the method's billing rule: reverse flash call when
   * verified; SMS, flash call and msgr2_bot on delivery; msgr1_otp and operator_id at initiation) and
   * `costPerVerified` (charged ÷ verified; null before the first verification).
   *
   * `country` narrows it to numbers of one calling code (`"7"`, `"+7"`, or an ISO code such as
   * `"RU"`; `"unknown"` for numbers without one). The figures are kept in the store, shared by every
   * instance, each session counted once; a session's figures all count on the day it started.
   * Counts are of what the module saw: a delivery it never observed (an SMS that expired before any
   * poll showed `delivered`) is not counted, nor its charge. Rejects with a RangeError for a bad
   * `days` or `country`.
   */
  methodStats(query: MethodStatsQuery = {}): Promise<MethodStatsReport> {
    return this.stats.figures(query);
  }

  /**
   * The health of each method on each operator prefix this instance's `auto` starts asked about
   * (issue 47): `healthy`, `degraded` (its fallback comes sooner) or `demoted` (not tried first),
   * since when, and the recent window's and the week's completion and delivery it was judged on.
   */
  methodHealth(): MethodHealthReport[] {
    return this.health.report();
  }
}

function checkDate(field: 'from' | 'to', value: string | Date | undefined): string | undefined {
  return value === undefined ? undefined : calendarDate('getUsage', field, value);
}
