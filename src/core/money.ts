/** An amount of money as the API states it. */
export interface Money {
  /** Decimal amount as on the wire (at most 2 places for RUB). */
  amount: number;
  currency: 'RUB' | (string & { readonly __unknownCurrency?: never });
}

/**
 * Amounts in major units (RUB with kopecks as decimals) as integer minor units, so that the
 * store's integer counters add them without floating-point drift. Undefined for non-amounts.
 */
export function toMinorUnits(amount: unknown): number | undefined {
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) return undefined;
  return Math.round(amount * 100);
}

export function toMajorUnits(minor: number): number {
  return minor / 100;
}
