import { describe, expect, it } from '@jest/globals';
import {
  fallbackAfterMs,
  informsFallbackMoment,
  isProbeStep,
  PROBE_EVERY,
  learnsFallbackMoment,
  matureFigures,
  stepFallbackMs,
  sumMomentCounts,
  type FallbackMomentSettings,
} from './fallback-moment.js';

const BOUNDS = [10_000, 20_000, 40_000, 80_000];
const SETTINGS: FallbackMomentSettings = {
  stalledShare: 0.5,
  waitingShare: false,
  minSamples: 10,
  floorMs: 5_000,
  ceilingMs: 60_000,
};
const FIXED = 45_000;
/** 10 verified: 2 by 10 s, 8 by 20 s, all by 40 s. */
const BUCKETS = [2, 6, 2, 0, 0];

describe('fallbackAfterMs: a step stalls once few of the method’s successful users are still unfinished', () => {
  it('the fixed timeout until the figures hold minSamples verified sessions', () => {
    expect(fallbackAfterMs({ ended: 0, buckets: [] }, SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs({ ended: 9, buckets: [2, 5, 2, 0, 0] }, SETTINGS, FIXED, BOUNDS)).toBe(FIXED);
    expect(fallbackAfterMs({ ended: 10, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).not.toBe(FIXED);
  });

  it('the 1 − stalledShare quantile of their time to verify: 0.5 their median, 0.1 their 90th percentile', () => {
    // Median: the 5th of 10, 3 of the 6 into the (10 s, 20 s] bucket.
    expect(fallbackAfterMs({ ended: 10, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).toBe(15_000);
    const p90 = { ...SETTINGS, stalledShare: 0.1 };
    expect(fallbackAfterMs({ ended: 10, buckets: BUCKETS }, p90, FIXED, BOUNDS)).toBe(30_000);
    // Only successful users count: as many who never verified do not move it.
    expect(fallbackAfterMs({ ended: 100, buckets: BUCKETS }, SETTINGS, FIXED, BOUNDS)).toBe(15_000);
  });

  it('with waitingShare, earlier once fewer than that share of the users still waiting go on to verify', () => {
    const waiting = { ...SETTINGS, waitingShare: 0.4 };
    // 20 ended, 10 verified: (10 − x) ÷ (20 − x) ≤ 0.4 once x = 3⅓ have, in the (10 s, 20 s] bucket.
    expect(fallbackAfterMs({ ended: 20, buckets: BUCKETS }, waiting, FIXED, BOUNDS)).toBe(12_222);
    // (10 − x) ÷ (20 − x) ≤ 0.2 only from x = 7.5 (19.2 s): the median comes first.
    const strict = { ...SETTINGS, waitingShare: 0.2 };
    expect(fallbackAfterMs({ ended: 20, buckets: BUCKETS }, strict, FIXED, BOUNDS)).toBe(15_000);
    // Every user who ended verified: one still waiting is on the way, the quantile decides.
    expect(fallbackAfterMs({ ended: 10, buckets: BUCKETS }, waiting, FIXED, BOUNDS)).toBe(15_000);
    // A method no more than waitingShare of its users complete stalls at once: the floor.
    expect(fallbackAfterMs({ ended: 25, buckets: BUCKETS }, waiting, FIXED, BOUNDS)).toBe(5_000);
  });

  it('bounded by the floor and the ceiling', () => {
    const fast = { ended: 10, buckets: [10, 0, 0, 0, 0] };
    expect(fallbackAfterMs(fast, SETTINGS, FIXED, BOUNDS)).toBe(5_000);
    expect(fallbackAfterMs(fast, { ...SETTINGS, floorMs: 8_000 }, FIXED, BOUNDS)).toBe(8_000);
    expect(fallbackAfterMs({ ended: 10, buckets: [0, 0, 0, 0, 10] }, SETTINGS, FIXED, BOUNDS)).toBe(60_000);
    expect(
      fallbackAfterMs(
        { ended: 10, buckets: [0, 0, 0, 10, 0] },
        { ...SETTINGS, stalledShare: 0.01, ceilingMs: 90_000 },
        FIXED,
        BOUNDS,
      ),
    ).toBe(79_600);
  });
});

describe('probe steps: the figures of a method whose code is typed in the page come from steps not cut off', () => {
  const ids = Array.from({ length: 2000 }, (_, i) => `req-${i}`);

  it('one step in PROBE_EVERY of a code method, drawn from its request id (the same on every instance)', () => {
    const probes = ids.filter((id) => isProbeStep('flash_call', id));
    expect(probes.length).toBeGreaterThan(2000 / PROBE_EVERY / 2);
    expect(probes.length).toBeLessThan((2000 / PROBE_EVERY) * 2);
    expect(ids.filter((id) => isProbeStep('flash_call', id))).toStrictEqual(probes);
    expect(ids.filter((id) => isProbeStep('sms', id))).toStrictEqual(probes);
  });

  it('a reverse call is placed whatever the page shows: never a probe, every session informs the moment', () => {
    expect(ids.some((id) => isProbeStep('reverse_flash_call', id))).toBe(false);
    expect(ids.every((id) => informsFallbackMoment('reverse_flash_call', id))).toBe(true);
    expect(ids.filter((id) => informsFallbackMoment('flash_call', id))).toStrictEqual(
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
    expect(learnsFallbackMoment({ ended: 50, buckets: buckets(SETTINGS.minSamples - 1) }, SETTINGS)).toBe(
      false,
    );
    expect(learnsFallbackMoment({ ended: 50, buckets: buckets(SETTINGS.minSamples) }, SETTINGS)).toBe(true);
  });
});

describe('matureFigures: the figures of the steps started a ceiling ago or more', () => {
  const then = { started: 50, ended: 10, left: 0, buckets: [2, 6, 2, 0, 0] };
  const now = { started: 100, ended: 30, left: 0, buckets: [12, 12, 4, 2, 0] };

  it('every step’s figures until a read a ceiling old is known', () => {
    expect(matureFigures(now, undefined, 80_000, BOUNDS)).toStrictEqual({ ended: 30, buckets: now.buckets });
  });

  it('verifications since then of steps started after it taken out, steps started before it still pending counted as ended', () => {
    // 20 verified in the 80 s since: one verified τ after its start is of a later step with
    // probability 1 − τ ÷ 80 s (τ at its bucket's bound): 8.75 + 4.5 + 1 + 0 of them.
    const mature = matureFigures(now, then, 80_000, BOUNDS);
    expect(mature.buckets).toStrictEqual([3.25, 7.5, 3, 2, 0]);
    // 15.75 of the 50 steps started before then ended, the other 34.25 are still pending: all 50 count.
    expect(mature.ended).toBeCloseTo(50);
  });

  it('never more stalled steps than steps pending now; steps left for another step are neither', () => {
    const few = { ...now, started: 35, left: 3 };
    // 2 pending now: at most 2 of the steps started before then are stalled.
    expect(matureFigures(few, then, 80_000, BOUNDS).ended).toBeCloseTo(30 - 14.25 + 2);
  });
});

describe('fallback moment: edges', () => {
  it('a method exactly waitingShare of its users complete stalls at once: the floor', () => {
    // 20 ended, 10 verified, all between 20 s and 40 s: (10 − 0) ÷ (20 − 0) is already 0.5.
    const half = { ...SETTINGS, waitingShare: 0.5 };
    expect(fallbackAfterMs({ ended: 20, buckets: [0, 0, 10, 0, 0] }, half, FIXED, BOUNDS)).toBe(5_000);
    expect(fallbackAfterMs({ ended: 20, buckets: [0, 0, 10, 0, 0] }, SETTINGS, FIXED, BOUNDS)).toBe(30_000);
  });

  it('with no verified session the fixed timeout, even when no samples are asked for', () => {
    const eager = { ...SETTINGS, minSamples: 0 };
    expect(fallbackAfterMs({ ended: 4, buckets: [0, 0, 0, 0, 0] }, eager, FIXED, BOUNDS)).toBe(FIXED);
  });

  it('steps left for another step count as closed: only the rest of those started before then are stalled', () => {
    const buckets = [2, 1, 0, 0, 0];
    const then = { started: 10, ended: 3, left: 0, buckets };
    // 20 started, 5 ended, 3 left: of the 10 started before then, 8 closed, 2 stalled.
    const now = { started: 20, ended: 5, left: 3, buckets };
    expect(matureFigures(now, then, 80_000, BOUNDS)).toStrictEqual({ ended: 7, buckets });
  });

  it('sumMomentCounts adds the groups, bucket by bucket, the shorter ones padded', () => {
    expect(
      sumMomentCounts([
        { started: 3, ended: 2, left: 1, buckets: [1, 1] },
        { started: 5, ended: 4, left: 0, buckets: [0, 2, 3] },
      ]),
    ).toStrictEqual({ started: 8, ended: 6, left: 1, buckets: [1, 3, 3] });
    expect(sumMomentCounts([])).toStrictEqual({ started: 0, ended: 0, left: 0, buckets: [] });
  });
});
