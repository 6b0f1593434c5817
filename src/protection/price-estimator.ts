import type { KnownVerificationMethod, Money, Prices } from '../api/api.types.js';
import { toMinorUnits } from '../core/money.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import { errorText } from '../core/error-text.js';

const READ_RETRY_MS = 30_000;

interface PriceList {
  /** Store-clock time of the read. */
  readAt: number;
  minorByMethod: Map<string, number>;
}

/**
 * What a start of a method is expected to cost, for the spend cap's reservation before the API
 * answers with the real `cost`. Prices come from `GET /v1/prices` (never hard-coded, as the spec
 * asks) through the module's price cache (VerificationAccountService), asked again at most every
 * `pricesTtlMs` and by one caller at a time. When the list cannot be read, the last list is used
 * and no read is tried for 30 s (an outage must not slow every start). A method missing from the
 * list is estimated by the last real cost seen for it; with no price known for it, by the
 * configured worst-case price (or the highest known price, if higher): an estimate below the real
 * cost would let concurrent starts pass the cap before their real costs are counted.
 */
export class PriceEstimator {
  private list: PriceList | undefined;
  /** Store-clock time before which a failed read is not repeated (an outage must not slow every start). */
  private retryAfter = 0;
  private reading: Promise<PriceList | undefined> | undefined;
  private readonly learned = new Map<string, number>();

  constructor(
    private readonly readPrices: () => Promise<Prices>,
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly logger: ProtectionLog,
    /** Reserved for a method with no known price, minor units. */
    private readonly worstCaseMinor: number,
  ) {}

  /** The estimate in minor units (kopecks), at least 1. */
  async estimateMinor(method: KnownVerificationMethod): Promise<number> {
    const list = await this.currentList();
    const known = list?.minorByMethod.get(method) ?? this.learned.get(method);
    if (known !== undefined) return Math.max(known, 1);
    const highest = Math.max(0, ...(list?.minorByMethod.values() ?? []), ...this.learned.values());
    return Math.max(highest, this.worstCaseMinor, 1);
  }

  /** Remembers the real cost of a started session (used when the price list lacks the method). */
  learn(method: KnownVerificationMethod, cost: Money): void {
    const minor = toMinorUnits(cost.amount);
    if (minor !== undefined) this.learned.set(method, minor);
  }

  private async currentList(): Promise<PriceList | undefined> {
    const now = this.now();
    if (this.list && now - this.list.readAt < this.ttlMs) return this.list;
    if (now < this.retryAfter) return this.list;
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<PriceList | undefined> {
    try {
      const prices = await this.readPrices();
      const minorByMethod = new Map<string, number>();
      for (const { method, price } of prices.prices) {
        const minor = toMinorUnits(price.amount);
        if (minor !== undefined) minorByMethod.set(method, minor);
      }
      this.list = { readAt: this.now(), minorByMethod };
    } catch (error) {
      this.retryAfter = this.now() + Math.min(this.ttlMs, READ_RETRY_MS);
      this.logger.warn('spend cap: prices could not be read; using the last known estimates', {
        error: errorText(error),
      });
    }
    return this.list;
  }
}
