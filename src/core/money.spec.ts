import { describe, expect, it } from '@jest/globals';
import { toMajorUnits, toMinorUnits } from './money.js';

describe('money', () => {
  it('counts amounts in integer kopecks, rounding away floating-point noise', () => {
    expect(toMinorUnits(0)).toBe(0);
    expect(toMinorUnits(3.5)).toBe(350);
    expect(toMinorUnits(0.1 + 0.2)).toBe(30);
    expect(toMinorUnits(19.99)).toBe(1999);
    expect(toMajorUnits(1999)).toBe(19.99);
    expect(toMajorUnits(toMinorUnits(12.34)!)).toBe(12.34);
  });

  it('is undefined for what is not an amount: not a number, not finite, or negative', () => {
    for (const amount of ['3.5', null, undefined, Number.NaN, Number.POSITIVE_INFINITY, -0.01, -5])
      expect(toMinorUnits(amount)).toBeUndefined();
  });
});
