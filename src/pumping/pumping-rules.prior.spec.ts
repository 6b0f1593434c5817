import { describe, expect, it } from '@jest/globals';
import type { SubjectCounts } from './pumping-counts.js';
import {
  belowPrior,
  countryBelowPrior,
  countryUnderAttack,
  LEARNED_MIN_STARTS,
  learnedExpectation,
  minUnconvertedFor,
  pastShareUnderAttack,
  recentExcused,
  TYPING_MS,
} from './pumping-rules.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';

/* The prior (issue 43, finding 5): a country judged against the share of starts its users complete. */

const rules = VERIFICATION_DEFAULTS.limits.pumping;
const counts = (starts: number, verified: number, extra: Partial<SubjectCounts> = {}): SubjectCounts => ({
  starts,
  verified,
  known: false,
  ...extra,
});

describe('pumping rules: the prior', () => {
  it('a shortfall is an attack past three standard deviations of chance, not at them', () => {
    // 48 starts at 0.75: 36 expected, one deviation 3; the bound is 27 verified (a shortfall of 9).
    expect(belowPrior(48, 27, 0.75, 1)).toBe(false);
    expect(belowPrior(48, 26, 0.75, 1)).toBe(true);
    expect(belowPrior(48, 28, 0.75, 1)).toBe(false);
    // No prior, no judgement.
    expect(belowPrior(48, 0, undefined, 1)).toBe(false);
  });

  it('a country needs its minimum of unconverted starts, in the window, the day or the week', () => {
    const min = rules.countryMinStarts;
    expect(countryBelowPrior(counts(min - 1, 0, { expected: 0.8 }), rules)).toBe(false);
    expect(countryBelowPrior(counts(min, 0, { expected: 0.8 }), rules)).toBe(true);
    expect(countryBelowPrior(counts(min + 1, 1, { expected: 0.8 }), rules)).toBe(true);
    // A quiet window, a day short of the prior (a fresh host: no yesterday needed).
    const day = { starts: 300, verified: 200, baseline: 0 };
    expect(countryUnderAttack(counts(10, 8, { expected: 0.8, day }), rules)).toBe(true);
    expect(countryUnderAttack(counts(10, 8, { expected: 0.8, day: { ...day, verified: 240 } }), rules)).toBe(
      false,
    );
    // A week whose days each pass: 1,000 starts, at 0.8 (σ 12.6, 3σ 37.9: 763 verified pass, 762 do not).
    const week = (verified: number) => ({ starts: 1000, verified });
    expect(countryBelowPrior(counts(10, 8, { expected: 0.8, week: week(763) }), rules)).toBe(false);
    expect(countryBelowPrior(counts(10, 8, { expected: 0.8, week: week(762) }), rules)).toBe(true);
  });

  it('past a share, a twin short of the prior at all over its day or week is under attack; chance’s allowance is spent', () => {
    const twin = (day: { starts: number; verified: number }, week = day) =>
      counts(0, 0, { expected: 0.8, day: { ...day, baseline: 0 }, week });
    // 50 starts at 0.8: 40 expected. 40 verified is no shortfall, 39 is one (far within 3σ, 8.5).
    expect(pastShareUnderAttack(twin({ starts: 50, verified: 40 }), rules)).toBe(false);
    expect(pastShareUnderAttack(twin({ starts: 50, verified: 39 }), rules)).toBe(true);
    expect(countryUnderAttack(twin({ starts: 50, verified: 39 }), rules)).toBe(false);
    // The week alone, or the day alone, suffices; the window is not looked at (an hour is noise).
    expect(
      pastShareUnderAttack(twin({ starts: 50, verified: 40 }, { starts: 500, verified: 399 }), rules),
    ).toBe(true);
    expect(
      pastShareUnderAttack(twin({ starts: 50, verified: 39 }, { starts: 500, verified: 450 }), rules),
    ).toBe(true);
    expect(pastShareUnderAttack(counts(50, 33, { expected: 0.8 }), rules)).toBe(false);
    // Its recent starts (their users may still be typing) are left out, all of them: a crowd of one
    // network's users starting at once is not judged before they could complete.
    const typing = { ...twin({ starts: 50, verified: 39 }), recent: 2, recentMs: 6 * 60_000 };
    expect(recentExcused(typing)).toBe(0);
    expect(pastShareUnderAttack(typing, rules)).toBe(false);
    expect(pastShareUnderAttack({ ...typing, recent: 1 }, rules)).toBe(true);
  });

  it('under attack one verification does not vouch for a range or prefix short of its prior', () => {
    const history = { baseline: 1, ranges: 3 };
    // 8 starts at 0.75: one deviation 1.22, the bound a shortfall of 3.67.
    const meets = counts(8, 3, { expected: 0.75, ...history });
    const short = counts(8, 2, { expected: 0.75, ...history });
    expect(minUnconvertedFor('range', meets, true, rules)).toBe(rules.rangeMinStarts);
    expect(minUnconvertedFor('range', short, true, rules)).toBe(rules.underAttackMinStarts);
    expect(minUnconvertedFor('prefix', short, true, rules)).toBe(rules.underAttackMinStarts);
    // In normal times the normal minimum.
    expect(minUnconvertedFor('prefix', short, false, rules)).toBe(rules.prefixMinStarts);
  });

  it('starts of the last minutes are left out up to the usual rate over the typing time, no further', () => {
    const HOUR = 3_600_000;
    const MIN = 60_000;
    // A one-hour window; `recent` covers its last 6 minutes: 54 minutes of the rest, 2 of them typing.
    const at = (starts: number, recent: number, verified = 0, extra: Partial<SubjectCounts> = {}) =>
      counts(starts, verified, {
        expected: 0.8,
        recent,
        recentMs: 6 * MIN,
        raw: { at: 0, windowMs: HOUR, starts: [starts, 0], verified: [0, 0], callers: [0, 0], deducted: 0 },
        ...extra,
      });
    expect(TYPING_MS).toBe(2 * MIN);
    // The rest of the window: 270 starts in 54 minutes, 10 in 2: at most 10 recent starts excused.
    expect(recentExcused(at(279, 9))).toBe(9);
    expect(recentExcused(at(280, 10))).toBe(10);
    expect(recentExcused(at(281, 11))).toBe(10);
    expect(recentExcused(at(400, 130))).toBe(10);
    // No window to learn the rate from: nothing excused.
    expect(recentExcused({ ...at(281, 11), raw: undefined })).toBe(0);
    expect(recentExcused({ ...at(281, 11), recentMs: undefined })).toBe(0);
    // A burst of 60 unconverted starts beside 270 converting at 0.85 (230): judged at once, not left out.
    expect(countryBelowPrior(at(330, 60, 230), rules)).toBe(true);
    // The same 60 at the usual rate (the rest 1,620 starts in 54 minutes: 60 in 2) are excused.
    expect(recentExcused(at(1680, 60, 1377))).toBe(60);
    expect(countryBelowPrior(at(1680, 60, 1377), rules)).toBe(false);
    // Excused from the day's and the week's counts too, and never more than the recent starts.
    const day = { starts: 60, verified: 0, baseline: 0 };
    expect(countryBelowPrior(at(0, 41, 0, { day }), rules)).toBe(true);
    expect(countryBelowPrior(at(1200, 41, 1200, { day }), rules)).toBe(false);
    expect(countryBelowPrior(at(1200, 40, 1200, { day }), rules)).toBe(true);
  });

  it('the window is judged against the rest of the week’s own rate when that is surely above the prior', () => {
    // 400 starts outside the window, 360 verified: 0.9, less two standard errors (0.015 each).
    const window = { expected: 0.8, week: { starts: 500, verified: 450 } };
    expect(learnedExpectation(counts(100, 90, window))).toBeCloseTo(0.87, 10);
    // One start short of LEARNED_MIN_STARTS outside the window: the prior alone.
    const few = { expected: 0.8, week: { starts: 100 + LEARNED_MIN_STARTS - 1, verified: 280 } };
    expect(learnedExpectation(counts(100, 90, few))).toBe(0.8);
    const enough = { expected: 0.8, week: { starts: 100 + LEARNED_MIN_STARTS, verified: 280 } };
    expect(learnedExpectation(counts(100, 90, enough))).toBeGreaterThan(0.8);
    // A rate below the prior never lowers it, and nothing is expected above 0.99.
    expect(learnedExpectation(counts(100, 50, { expected: 0.8, week: { starts: 500, verified: 250 } }))).toBe(
      0.8,
    );
    expect(
      learnedExpectation(counts(0, 0, { expected: 0.8, week: { starts: 100_000, verified: 100_000 } })),
    ).toBe(0.99);
    // A crowd hour converting 74 % hides 48 unconverted starts against the prior, not against 0.87.
    const crowd = counts(348, 257, { expected: 0.8, week: { starts: 848, verified: 707 } });
    expect(countryBelowPrior({ ...crowd, week: undefined }, rules)).toBe(false);
    expect(countryBelowPrior(crowd, rules)).toBe(true);
  });
});
