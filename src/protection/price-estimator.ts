import type { KnownVerificationMethod, Money } from '../api/api.types.js';
import type { PriceBook } from '../account/price-book.js';
import { toMinorUnits } from '../core/money.js';

/**
 * What a start of a method is expected to cost, for the spend cap's reservation before the API
 * answers with the real `cost`. Prices come from the module's price book (PriceBook: `GET
 * /v1/prices`, never hard-coded, as the spec asks; its cache and its pause after a failed read). A
 * method missing from the list is estimated by the last real cost seen for it; with no price known
 * for it, by the configured worst-case price (or the highest known price, if higher): an estimate
 * below the real cost would let concurrent starts pass the cap before their real costs are counted.
 */
export class PriceEstimator {
  private readonly learned = new Map<string, number>();

  constructor(
    private readonly prices: Pick<PriceBook, 'latest'>,
    /** Reserved for a method with no known price, minor units. */
    private readonly worstCaseMinor: number,
  ) {}

  /** The estimate in minor units (kopecks), at least 1. */
  async estimateMinor(method: KnownVerificationMethod): Promise<number> {
    const list = (await this.prices.latest())?.minorByMethod;
    const known = list?.get(method) ?? this.learned.get(method);
    if (known !== undefined) return Math.max(known, 1);
    const highest = Math.max(0, ...(list?.values() ?? []), ...this.learned.values());
    return Math.max(highest, this.worstCaseMinor, 1);
  }

  /** Remembers the real cost of a started session (used when the price list lacks the method). */
  learn(method: KnownVerificationMethod, cost: Money): void {
    const minor = toMinorUnits(cost.amount);
    if (minor !== undefined) this.learned.set(method, minor);
  }
}
