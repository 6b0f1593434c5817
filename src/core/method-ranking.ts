/** The orders in which a journey tries methods: by price, or by what a verified user costs. */
import type { Money } from './money.js';
import type { VerificationMethod } from './verification-method.js';
import { ArgumentRangeError } from './phone-verification.error.js';

/** A method's current price (`GET /v1/prices`' entries fit). Prices are compared as amounts: one currency. */
export interface MethodPriceEntry {
  method: VerificationMethod;
  price: Money;
}

/** What was observed of a method: sessions started, how many of them were verified, and from how many callers. */
export interface MethodSamples {
  started: number;
  verified: number;
  /** Distinct callers the starts came from (summed over days); absent: not known. */
  callers?: number;
}

/** Observed figures by method name (`methodStats()`' answer fits); a method absent has no samples. */
export type MethodSamplesByMethod = Readonly<Partial<Record<string, MethodSamples>>>;

/**
 * `methods` cheapest first by their current price. A method without a price (not enabled for the
 * account, or not priced yet) comes after every priced one. Ties, and the unpriced ones, keep the
 * order they were given in.
 */
export function rankByPrice<M extends VerificationMethod>(
  methods: readonly M[],
  prices: readonly MethodPriceEntry[],
): M[] {
  const price = priceTable(prices);
  return rank(
    methods,
    (method) => price.get(method),
    () => undefined,
  );
}

/**
 * The policy mode `cost_per_success`: `methods` by what a verified user costs, the observed price ÷
 * success rate (success = verified ÷ started), cheapest first.
 *
 * A method counts as sampled once it has at least `minSamples` starts (and at least one) from at
 * least `minCallers` distinct callers: a rate a few callers made (abandoned starts) is not trusted. A method
 * not sampled yet competes at its price ÷ the pooled success rate of the sampled candidates (their
 * verified ÷ their starts): as if it converted like an average method. Ranking everything by price
 * until every candidate is sampled would never start: a method that price order puts last seldom
 * gets the starts it needs. With no candidate sampled the order is the price order.
 *
 * A sampled method that never verified (a rate of 0) and any method while the pooled rate is 0 cost
 * without bound: they come after the others, cheapest first among themselves. A method without a
 * price comes last (as in rankByPrice). Ties keep the order given.
 */
export function rankByCostPerSuccess<M extends VerificationMethod>(
  methods: readonly M[],
  prices: readonly MethodPriceEntry[],
  stats: MethodSamplesByMethod,
  minSamples: number,
  minCallers = 0,
): M[] {
  if (!Number.isSafeInteger(minSamples) || minSamples < 0)
    throw new ArgumentRangeError(`minSamples must be a non-negative integer, got ${minSamples}`);
  const price = priceTable(prices);
  const needed = Math.max(minSamples, 1);
  const sampled = new Map<string, MethodSamples>();
  for (const method of methods) {
    const samples = stats[method];
    if (price.has(method) && samples && samples.started >= needed && (samples.callers ?? 0) >= minCallers)
      sampled.set(method, samples);
  }
  if (sampled.size === 0) return rankByPrice(methods, prices);
  let started = 0;
  let verified = 0;
  for (const samples of sampled.values()) {
    started += samples.started;
    verified += Math.min(samples.verified, samples.started);
  }
  const pooledRate = verified / started;
  const rateOf = (method: M): number => {
    const samples = sampled.get(method);
    return samples ? Math.min(samples.verified, samples.started) / samples.started : pooledRate;
  };
  return rank(
    methods,
    (method) => price.get(method),
    (method, amount) => {
      const rate = rateOf(method);
      return rate > 0 ? amount / rate : Number.POSITIVE_INFINITY;
    },
  );
}

function priceTable(prices: readonly MethodPriceEntry[]): Map<string, number> {
  const table = new Map<string, number>();
  for (const { method, price } of prices)
    if (Number.isFinite(price.amount) && !table.has(method)) table.set(method, price.amount);
  return table;
}

/**
 * Sorts by score (when given), then price, then the order given; unpriced methods last. A stable
 * sort on precomputed keys: the comparator never recomputes a score.
 */
function rank<M extends VerificationMethod>(
  methods: readonly M[],
  priceOf: (method: M) => number | undefined,
  scoreOf: (method: M, price: number) => number | undefined,
): M[] {
  const keyed = methods.map((method, index) => {
    const price = priceOf(method);
    return {
      method,
      index,
      price: price ?? Number.POSITIVE_INFINITY,
      priced: price !== undefined,
      score: price === undefined ? undefined : scoreOf(method, price),
    };
  });
  keyed.sort(
    (a, b) =>
      Number(b.priced) - Number(a.priced) ||
      compare(a.score, b.score) ||
      compare(a.price, b.price) ||
      a.index - b.index,
  );
  return keyed.map((entry) => entry.method);
}

function compare(a: number | undefined, b: number | undefined): number {
  if (a === undefined || b === undefined || a === b) return 0;
  return a < b ? -1 : 1;
}

/**
 * `order` split into the methods not demoted and those demoted on the number's operator prefix (`isDemoted`
 * by position), each part in its order: `auto` tries the demoted ones after every other, at a start and at a
 * switch alike.
 */
export function splitDemoted<M>(order: readonly M[], isDemoted: (index: number) => boolean): [M[], M[]] {
  return [order.filter((_, i) => !isDemoted(i)), order.filter((_, i) => isDemoted(i))];
}
