import { describe, expect, it } from '@jest/globals';
import {
  fallbackAfterMs,
  informsFallbackMoment,
  isProbeStep,
  PROBE_EVERY,
  learnsFallbackMoment,
  stepFallbackMs,
  type FallbackMomentSettings,
} from './fallback-moment.js';

const BOUNDS = [10_000, 20_000, 40_000, 80_000];
const SETTINGS: FallbackMomentSettings = {
  stalledShare: 0.5,
  minSamples: 10,
  floorMs: 5_000,
  ceilingMs: 60_000,
};
const FIXED = 45_000;
/** 10 verified: 2 by 10 s, 8 by 20 s, all by 40 s. */
const BUCKETS = [2, 6, 2, 0, 0];

describe('fallbackAfterMs: a step stalls when few of the users still waiting on it go on to verify', () => {
  it('the fixed timeout until the figures hold minSamples verified sessions', () => {
    expect(fallbackAfterMs({ started: 0, buckets: [] }, SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs({ started: 9, buckets: [2, 5, 2, 0, 0] }, SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs({ started: 10, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).not.toBe(FIXED);
  });

  it('a method every user completes waits for the last of them: one still waiting is on the way', () => {
    expect(fallbackAfterMs({ started: 10, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).toBe(40_000);
  });

  it('the earliest time at which fewer than stalledShare of those still waiting go on to verify', () => {
    // 20 started, 10 verified: (10 − x) ÷ (20 − x) ≤ 0.4 once x = 3⅓ have, in the (10 s, 20 s] bucket.
    const share = { ...SETTINGS, stalledShare: 0.4 };
    expect(fallbackAfterMs({ started: 20, buckets: BUCKETS }, share, FIXED, BOUNDS)).toBe(12_222);
    const strict = { ...SETTINGS, stalledShare: 0.2 };
    // (10 − x) ÷ (20 − x) ≤ 0.2 from x = 7.5: 7.5 of 10 verified, in the (10 s, 20 s] bucket.
    expect(fallbackAfterMs({ started: 20, buckets: BUCKETS }, strict, FIXED, BOUNDS)).toBe(19_167);
    // A method no more than stalledShare of its users complete stalls at once: the floor.
    expect(fallbackAfterMs({ started: 20, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).toBe(5_000);
  });

  it('bounded by the floor and the ceiling', () => {
    const fast = { started: 10, buckets: [10, 0, 0, 0, 0] };
    expect(fallbackAfterMs({ ...fast, started: 30 }, SETTINGS, FIXED, BOUNDS)).toBe(5_000);
    expect(fallbackAfterMs({ ...fast, started: 30 }, { ...SETTINGS, floorMs: 8_000 }, FIXED, BOUNDS)).toBe(
      8_000,
    );
    expect(fallbackAfterMs({ started: 10, buckets: [0, 0, 0, 0, 10] }, SETTINGS, FIXED, BOUNDS)).toBe(60_000);
    expect(
      fallbackAfterMs(
        { started: 10, buckets: [0, 0, 0, 10, 0] },
        { ...SETTINGS, ceilingMs: 90_000 },
        FIXED,
        BOUNDS,
      ),
    ).toBe(80_000);
  });
});

describe('probe steps: the figures of a method whose code is typed in the page come from steps not cut off', () => {
  const ids = Array.from({ length: 2000 }, (_, i) => `req-${i}`);

  it('one step in PROBE_EVERY of a code method, drawn from its request id (the same on every instance)', () => {
    const probes = ids.filter((id) => isProbeStep('flash_call', id));
    expect(probes.length).toBeGreaterThan(2000 / PROBE_EVERY / 2);
    expect(probes.length).toBeLessThan((2000 / PROBE_EVERY) * 2);
    expect(ids.filter((id) => isProbeStep('flash_call', id))).toEqual(probes);
    expect(ids.filter((id) => isProbeStep('sms', id))).toEqual(probes);
  });

  it('a reverse call is placed whatever the page shows: never a probe, every session informs the moment', () => {
    expect(ids.some((id) => isProbeStep('reverse_flash_call', id))).toBe(false);
    expect(ids.every((id) => informsFallbackMoment('reverse_flash_call', id))).toBe(true);
    expect(ids.filter((id) => informsFallbackMoment('flash_call', id))).toEqual(
      ids.filter((id) => isProbeStep('flash_call', id)),
    );
  });

  it('a probe falls back at the ceiling, any other step at the learned moment', () => {
    const probe = ids.find((id) => isProbeStep('sms', id))!;
    const other = ids.find((id) => !isProbeStep('sms', id))!;
    const learned = { afterMs: 20_000, learned: true };
    expect(stepFallbackMs('sms', probe, SETTINGS, learned)).toBe(60_000);
    expect(stepFallbackMs('sms', other, SETTINGS, learned)).toBe(20_000);
    expect(stepFallbackMs('reverse_flash_call', probe, SETTINGS, learned)).toBe(20_000);
  });

  it('until the moment is learned, no step is a probe: every user gets the fixed moment', () => {
    const probe = ids.find((id) => isProbeStep('sms', id))!;
    expect(stepFallbackMs('sms', probe, SETTINGS, { afterMs: 45_000, learned: false })).toBe(45_000);
  });

  it('the moment is learned once minSamples sessions verified', () => {
    const buckets = (n: number) => [n, 0, 0];
    expect(learnsFallbackMoment({ started: 50, buckets: buckets(SETTINGS.minSamples - 1) }, SETTINGS)).toBe(
      false,
    );
    expect(learnsFallbackMoment({ started: 50, buckets: buckets(SETTINGS.minSamples) }, SETTINGS)).toBe(true);
  });
});
