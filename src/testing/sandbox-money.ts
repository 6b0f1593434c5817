/** Money in the sandbox: integer kopecks inside, RUB decimals with at most 2 places on the wire. */

export interface WireMoney {
  amount: number;
  currency: 'RUB';
}

/** RUB decimal → kopecks; undefined when the value is not a finite amount with at most 2 decimal places. */
export function rubToKopecks(rub: unknown): number | undefined {
  if (typeof rub !== 'number' || !Number.isFinite(rub)) return undefined;
  const kopecks = Math.round(rub * 100);
  // 1e-6 absorbs binary representation error (0.29 * 100 = 28.999999999999996) but not a third decimal place.
  if (Math.abs(rub * 100 - kopecks) > 1e-6) return undefined;
  return kopecks;
}

export function toWireMoney(kopecks: number): WireMoney {
  return { amount: kopecks / 100, currency: 'RUB' };
}
