import { Inject, Injectable } from '@nestjs/common';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { errorText } from '../core/error-text.js';
import { toMinorUnits } from '../core/money.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';

/** Pause after a failed read before the module asks again (an outage must not slow every request). */
const READ_RETRY_MS = 30_000;

/** The account's price list as read once, with what every reader works out from it. */
export interface PriceList {
  readonly prices: Prices;
  /** Each listed method's price in minor units (kopecks); an amount that is not money is left out. */
  readonly minorByMethod: ReadonlyMap<string, number>;
}

/**
 * The account's prices (`GET /v1/prices`; the spec says never to hard-code them), read, cached and
 * backed off in this one place; the host's `getPrices`, the methods offered, the orchestration
 * policy and the spend cap all ask it. A list stands for `pricesTtlMs` on the module's clock and one
 * read at a time serves every caller. When a read fails the last list stands (the failure is logged
 * once per read) and the module's own readers do not ask again for 30 s (nor past the TTL); with no
 * list ever read they decide without one (every default method offered, the offered order, the
 * spend cap's worst-case price).
 *
 * The methods offered to frontends (`GET /{prefix}/methods`, the start route's check) follow the
 * book: `methods` given by the host, exactly those; not given, the default methods the list prices
 * (the API prices only what the account has enabled), so frontends are not offered a method the API
 * would refuse. With no list ever read, or one naming none of the defaults (an unexpected price
 * format), every default method is offered: a start of a method the account lacks is then refused by
 * the API, with nothing sent.
 */
@Injectable()
export class PriceBook {
  #held: { list: PriceList; readAt: number } | undefined;
  #reading: Promise<PriceList> | undefined;
  /** Module-clock time before which `latest` does not ask again after a failed read. */
  #retryAfter = 0;
  #emptyListReported = false;
  /** The methods each list read offers (`#offeredFrom`), worked out once per list. */
  readonly #offeredBy = new WeakMap<PriceList, readonly KnownVerificationMethod[]>();

  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly api: VerificationApiClient,
    private readonly telemetry: VerificationTelemetry,
  ) {}

  /** The list while it is younger than `pricesTtlMs`, without asking; undefined when a read is due. */
  current(): PriceList | undefined {
    const held = this.#held;
    return held && this.options.clock() - held.readAt < this.options.pricesTtlMs ? held.list : undefined;
  }

  /** The last list read, however old, without asking; undefined before the first read. */
  last(): PriceList | undefined {
    return this.#held?.list;
  }

  /**
   * The module's read, which never fails: the current list, else a fresh one, else the last one read
   * (undefined before any), asking the API at most once per 30 s after a failure.
   */
  async latest(): Promise<PriceList | undefined> {
    const current = this.current();
    if (current) return current;
    if (this.options.clock() < this.#retryAfter) return this.#held?.list;
    return this.#read().catch(() => undefined);
  }

  /**
   * The host's read (`getPrices`): the current list, else a fresh one, else the last one read;
   * rejects with the API client's error when no list was ever read. Asks even during the pause.
   */
  async fetch(): Promise<PriceList> {
    return this.current() ?? this.#read();
  }

  /** The methods offered, from the last list read, without asking the API (before the first read: every candidate). */
  offeredNow(): readonly KnownVerificationMethod[] {
    return this.#offeredFrom(this.#held?.list);
  }

  /** The methods offered (see the class comment), reading the prices when they are due. */
  async offered(): Promise<readonly KnownVerificationMethod[]> {
    return this.options.methodsFromAccount ? this.#offeredFrom(await this.latest()) : this.options.methods;
  }

  #offeredFrom(list: PriceList | undefined): readonly KnownVerificationMethod[] {
    if (!list || !this.options.methodsFromAccount) return this.options.methods;
    let offered = this.#offeredBy.get(list);
    if (offered === undefined) this.#offeredBy.set(list, (offered = this.#usable(list)));
    return offered;
  }

  /** The candidates `list` prices; all of them when it prices none (an unexpected price format: said once). */
  #usable(list: PriceList): readonly KnownVerificationMethod[] {
    const candidates = this.options.methods;
    const usable = candidates.filter((method) => list.prices.prices.some((p) => p.method === method));
    if (usable.length > 0) return usable;
    if (!this.#emptyListReported) {
      this.#emptyListReported = true;
      this.telemetry.logger.warn(
        'methods: the price list names none of the default methods; offering all of them',
      );
    }
    return candidates;
  }

  #read(): Promise<PriceList> {
    this.#reading ??= this.#readOnce().finally(() => (this.#reading = undefined));
    return this.#reading;
  }

  async #readOnce(): Promise<PriceList> {
    const stale = this.#held;
    try {
      const prices = await this.api.getPrices();
      const list = toPriceList(prices);
      this.#held = { list, readAt: this.options.clock() };
      return list;
    } catch (error) {
      const now = this.options.clock();
      this.#retryAfter = now + Math.min(READ_RETRY_MS, this.options.pricesTtlMs);
      this.telemetry.logger.warn('prices could not be read; the last list read stands until they can', {
        age_ms: stale ? now - stale.readAt : null,
        error: errorText(error),
      });
      if (!stale) throw error;
      return stale.list;
    }
  }
}

/** A list as the book holds it, worked out once per read. */
export function toPriceList(prices: Prices): PriceList {
  const minorByMethod = new Map<string, number>();
  for (const { method, price } of prices.prices) {
    const amount = toMinorUnits(price.amount);
    if (amount !== undefined) minorByMethod.set(method, amount);
  }
  return { prices, minorByMethod };
}
