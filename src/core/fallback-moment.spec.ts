import { describe, expect, it } from '@jest/globals';
import { fallbackAfterMs, type FallbackMomentSettings } from './fallback-moment.js';

const BOUNDS = [10_000, 20_000, 40_000, 80_000];
const SETTINGS: FallbackMomentSettings = {
  stalledShare: 0.5,
  minSamples: 10,
  floorMs: 5_000,
  ceilingMs: 60_000,
};
const FIXED = 45_000;

describe('fallbackAfterMs: a step stalls when few of its method’s successful users are still unfinished', () => {
  it('the fixed timeout until the figures hold minSamples verified sessions', () => {
    expect(fallbackAfterMs([], SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs([2, 5, 2, 0, 0], SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs([2, 6, 2, 0, 0], SETTINGS, FIXED, BOUNDS)).not.toBe(FIXED);
  });

  it('the time by which all but stalledShare of them had verified', () => {
    // 10 verified: 2 by 10 s, 8 by 20 s, all by 40 s.
    const buckets = [2, 6, 2, 0, 0];
    expect(fallbackAfterMs(buckets, SETTINGS, FIXED, BOUNDS)).toBe(15_000);
    expect(fallbackAfterMs(buckets, { ...SETTINGS, stalledShare: 0.1 }, FIXED, BOUNDS)).toBe(30_000);
    expect(fallbackAfterMs(buckets, { ...SETTINGS, stalledShare: 0.8 }, FIXED, BOUNDS)).toBe(10_000);
  });

  it('bounded by the floor and the ceiling', () => {
    expect(fallbackAfterMs([10, 0, 0, 0, 0], SETTINGS, FIXED, BOUNDS)).toBe(5_000);
    expect(fallbackAfterMs([10, 0, 0, 0, 0], { ...SETTINGS, floorMs: 8_000 }, FIXED, BOUNDS)).toBe(8_000);
    expect(fallbackAfterMs([0, 0, 0, 0, 10], SETTINGS, FIXED, BOUNDS)).toBe(60_000);
    expect(fallbackAfterMs([0, 0, 0, 10, 0], { ...SETTINGS, ceilingMs: 90_000 }, FIXED, BOUNDS)).toBe(60_000);
  });
});
