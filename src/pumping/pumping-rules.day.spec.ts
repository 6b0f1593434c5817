import { describe, expect, it } from '@jest/globals';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { countsAt, countsWith, type DayCounts, type SubjectCounts } from './pumping-counts.js';
import {
  countryUnderAttack,
  freshBurst,
  hasHistory,
  HISTORY_RANGES,
  liftsAt,
  minUnconvertedFor,
  ruleOf,
  slowDrip,
} from './pumping-rules.js';
import { subjectToHold } from './pumping-verdict.js';

/**
 * Issue 29's rules against attackers who spread thin: the day's judgement of prefixes and countries
 * (the slow drip), and a prefix's history and proofs counted in ranges (an owner farm in one range).
 */

const rules = VERIFICATION_DEFAULTS.limits.pumping;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const counts = (starts: number, verified: number, extra: Partial<SubjectCounts> = {}): SubjectCounts => ({
  starts,
  verified,
  known: false,
  ...extra,
});
const day = (starts: number, verified: number, baseline = 0): DayCounts => ({ starts, verified, baseline });

describe('the slow drip: a prefix or country judged over the day', () => {
  it('a prefix takes its window minimum of unconverted starts over a day, with or without a history', () => {
    for (const ranges of [0, HISTORY_RANGES]) {
      const under = counts(2, 0, { ranges, day: day(rules.prefixMinStarts - 1, 0) });
      expect(slowDrip('prefix', under, rules)).toBe(false);
      expect(slowDrip('prefix', { ...under, day: day(rules.prefixMinStarts, 0) }, rules)).toBe(true);
    }
    expect(slowDrip('prefix', counts(2, 0), rules)).toBe(false);
  });

  it('a day that converts, or that stays within surgeFactor times its normal daily rate, is not a drip', () => {
    expect(slowDrip('country', counts(0, 0, { day: day(100, 20) }), rules)).toBe(false);
    expect(slowDrip('country', counts(0, 0, { day: day(100, 19) }), rules)).toBe(true);
    expect(slowDrip('country', counts(0, 0, { day: day(90, 0, 30) }), rules)).toBe(false);
    expect(slowDrip('country', counts(0, 0, { day: day(91, 0, 30) }), rules)).toBe(true);
  });

  it("a country's day of unconverted starts puts it under attack though no window reaches its minimum", () => {
    const drip = counts(15, 0, { day: day(rules.countryMinStarts, 0) });
    expect(countryUnderAttack({ ...drip, day: undefined }, rules)).toBe(false);
    expect(countryUnderAttack(drip, rules)).toBe(true);
  });

  it('holds a prefix by the slow_drip rule after the window rules, never a range or caller', () => {
    const drip = { day: day(40, 0) };
    expect(ruleOf('prefix', counts(3, 0, drip), false, rules)).toBe('slow_drip');
    expect(ruleOf('prefix', counts(3, 0, { ...drip, callers: 10 }), false, rules)).toBe('fresh_burst');
    expect(ruleOf('range', counts(0.5, 0, drip), false, rules)).toBeUndefined();
    expect(ruleOf('owner', counts(3, 0, drip), false, rules)).toBeUndefined();
  });

  it('the day rolls on: a drip lifts once the day has slid past it, and a hold says so', () => {
    const at = 100 * DAY + 2 * HOUR;
    const held = counts(1, 0, {
      day: { ...day(30, 0), raw: { starts: [10, 30], verified: [0, 0] } },
      raw: { at, windowMs: HOUR, starts: [1, 0], verified: [0, 0], callers: [0, 0], deducted: 0 },
    });
    // 10 today, 30 yesterday weighted by what is left of it.
    expect(countsAt(held, at + HOUR).day?.starts).toBeCloseTo(10 + 30 * (21 / 24));
    expect(countsAt(held, at + DAY).day?.starts).toBeCloseTo(10 * (22 / 24));
    expect(countsWith(held, 2).day?.starts).toBe(32);
    const lifts = liftsAt('prefix', held, false, at + 15 * 60_000, rules);
    expect(ruleOf('prefix', countsAt(held, lifts - HOUR), false, rules)).toBe('slow_drip');
    expect(ruleOf('prefix', countsAt(held, lifts), false, rules)).toBeUndefined();
    expect(lifts).toBeLessThanOrEqual(at + 2 * DAY);
  });
});

describe('one range does not vouch for its prefix', () => {
  it('a prefix has a history only once numbers were verified in HISTORY_RANGES distinct ranges; a range by its own numbers', () => {
    expect(hasHistory('prefix', counts(0, 50, { ranges: HISTORY_RANGES - 1, baseline: 2 }))).toBe(false);
    expect(hasHistory('prefix', counts(0, 3, { ranges: HISTORY_RANGES }))).toBe(true);
    expect(hasHistory('range', counts(0, 1))).toBe(true);
    expect(hasHistory('range', counts(0, 0, { baseline: 0.5 }))).toBe(true);
  });

  it("a farm's numbers verified in one range do not cover a burst into the prefix's other ranges", () => {
    const farm = { ranges: 1, callers: rules.freshPrefixMinStarts + 1 };
    expect(freshBurst('prefix', counts(60, 50, farm), rules)).toBe(true);
    // A range's own numbers do count for the range.
    expect(freshBurst('range', counts(60, 50, { callers: 11 }), rules)).toBe(false);
    // Proofs in as many ranges as the burst's share needs do (a fifth of 10 callers: 2 ranges).
    const five = { ...rules, freshPrefixMinStarts: 5 };
    expect(freshBurst('prefix', counts(10, 2, { ranges: 2, callers: 10 }), five)).toBe(false);
    expect(freshBurst('prefix', counts(10, 2, { ranges: 1, callers: 10 }), five)).toBe(true);
  });

  it('while the country is under attack, a prefix without a history is held at the lowest minimum despite its numbers', () => {
    expect(minUnconvertedFor('prefix', counts(0, 50, { ranges: 1 }), true, rules)).toBe(1);
    expect(minUnconvertedFor('prefix', counts(0, 5, { ranges: HISTORY_RANGES }), true, rules)).toBe(20);
    expect(minUnconvertedFor('prefix', counts(0, 0, { ranges: HISTORY_RANGES }), true, rules)).toBe(1);
  });

  it('a start whose own range converts is not held by its prefix; one in a range that does not convert is', () => {
    const prefix = { kind: 'prefix' as const, counts: counts(30, 1, { ranges: 1, callers: 30 }) };
    const converting = { kind: 'range' as const, counts: counts(10, 8) };
    const pumped = { kind: 'range' as const, counts: counts(1, 0, { callers: 1 }) };
    expect(subjectToHold([converting, prefix], false, rules)).toBeUndefined();
    expect(subjectToHold([pumped, prefix], false, rules)?.kind).toBe('prefix');
  });
});
