import { describe, expect, it } from '@jest/globals';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import {
  belowPrior,
  converting,
  countryUnderAttack,
  doesNotConvert,
  hasHistory,
  HISTORY_RANGES,
  liftsAt,
  minUnconvertedFor,
  recentExcused,
  reserveRefuses,
  ruleOf,
  slowDrip,
  unconverted,
} from './pumping-rules.js';
import { subjectToHold } from './pumping-verdict.js';
import { countsAt, type SubjectCounts } from './pumping-counts.js';

const rules = VERIFICATION_DEFAULTS.limits.pumping;
const counts = (starts: number, verified: number): SubjectCounts => ({ starts, verified, known: false });

describe('pumping rules at their edges', () => {
  it('counts as unconverted only the starts that did not complete, never below zero', () => {
    expect(unconverted(counts(20, 3))).toBe(17);
    expect(unconverted(counts(2, 5))).toBe(0);
    // 17 unconverted starts are below a minimum of 20, although 20 were started.
    expect(doesNotConvert(counts(20, 3), 20, rules)).toBe(false);
  });

  it('a range takes the range minimum, a caller the callers one', () => {
    const distinct = { ...rules, rangeMinStarts: 30, prefixMinStarts: 40, callerMinStarts: 10 };
    const history = { ...counts(0, 0), baseline: 1 };
    expect(minUnconvertedFor('range', history, false, distinct)).toBe(30);
    expect(minUnconvertedFor('prefix', history, false, distinct)).toBe(40);
    for (const kind of ['owner', 'client', 'network'] as const)
      expect(minUnconvertedFor(kind, counts(0, 0), false, distinct)).toBe(10);
  });

  it('a hold ends when the conversion reaches the floor exactly', () => {
    // 2 of 10 starts completed: exactly minConversion (0.2).
    expect(converting(counts(10, 2), rules)).toBe(true);
    expect(converting(counts(11, 2), rules)).toBe(false);
  });

  it('with the reserve off (reserveShare 0), nothing is refused by it even past the cap', () => {
    expect(reserveRefuses({ spentShare: 1.5, reserveShare: 0, underAttack: true, known: false })).toBe(false);
    expect(reserveRefuses({ spentShare: 1.5, reserveShare: 0.01, underAttack: true, known: false })).toBe(
      true,
    );
  });
});

describe('pumping rules: a second shape of the options and of the subjects', () => {
  it("a country's day is judged at the country's minimum, a prefix's at the prefix's, when the two differ", () => {
    const apart = { ...rules, prefixMinStarts: 5, countryMinStarts: 30 };
    const dayOf = (starts: number) => ({ ...counts(0, 0), day: { starts, verified: 0, baseline: 0 } });
    expect(slowDrip('country', dayOf(29), apart)).toBe(false);
    expect(countryUnderAttack(dayOf(29), apart)).toBe(false);
    expect(countryUnderAttack(dayOf(30), apart)).toBe(true);
    expect(slowDrip('prefix', dayOf(5), apart)).toBe(true);
    expect(slowDrip('prefix', dayOf(4), apart)).toBe(false);
  });

  it('under attack an unknown caller takes the lower of the two minimums; a known one, and normal times, the normal one', () => {
    const lower = { ...rules, callerMinStarts: 10, underAttackMinStarts: 3 };
    expect(minUnconvertedFor('owner', counts(0, 0), true, lower)).toBe(3);
    expect(minUnconvertedFor('network', { ...counts(0, 0), known: true }, true, lower)).toBe(10);
    expect(minUnconvertedFor('client', counts(0, 0), false, lower)).toBe(10);
    const higher = { ...rules, callerMinStarts: 2, underAttackMinStarts: 5 };
    expect(minUnconvertedFor('owner', counts(0, 0), true, higher)).toBe(2);
  });

  it('a shortfall from the prior is judged only at the minimum of unconverted starts', () => {
    // 10 starts at 0.9: 9 expected, one deviation 0.95. 5 verified is short, but only 5 did not convert.
    expect(belowPrior(10, 5, 0.9, 6)).toBe(false);
    expect(belowPrior(10, 4, 0.9, 6)).toBe(true);
  });

  it('a window no longer than the recent span learns no usual rate: no recent start is excused', () => {
    const MIN = 60_000;
    const of = (windowMs: number) => ({
      ...counts(20, 0),
      recent: 5,
      recentMs: 6 * MIN,
      raw: {
        at: 0,
        windowMs,
        starts: [20, 0] as [number, number],
        verified: [0, 0] as [number, number],
        callers: [0, 0] as [number, number],
        deducted: 0,
      },
    });
    expect(recentExcused(of(6 * MIN))).toBe(0);
    expect(recentExcused(of(5 * MIN))).toBe(0);
    expect(recentExcused(of(60 * MIN))).toBeGreaterThan(0);
  });

  it('a country, like a prefix, has a history only from HISTORY_RANGES ranges verified in, never from its numbers', () => {
    expect(hasHistory('country', { ...counts(0, 40), baseline: 2, ranges: HISTORY_RANGES - 1 })).toBe(false);
    expect(hasHistory('country', { ...counts(0, 0), ranges: HISTORY_RANGES })).toBe(true);
  });

  it("a shared client key, like a network, is let go when the number's range and prefix convert; not when only the range does, or no prefix is judged", () => {
    const strict = { ...rules, callerMinStarts: 5 };
    const converting = { ...counts(10, 8), baseline: 1 };
    const range = { kind: 'range' as const, counts: converting };
    const prefix = { kind: 'prefix' as const, counts: converting };
    const client = { kind: 'client' as const, counts: counts(40, 0) };
    const network = { kind: 'network' as const, counts: counts(40, 0) };
    expect(subjectToHold([range, prefix, client], false, strict)).toBeUndefined();
    const short = { kind: 'prefix' as const, counts: counts(10, 0) };
    expect(subjectToHold([range, short, client], false, strict)?.kind).toBe('client');
    expect(subjectToHold([range, network], false, strict)?.kind).toBe('network');
  });
});

describe('pumping rules: when a hold held by the day lifts', () => {
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;
  const at = 100 * DAY + 2 * HOUR;
  const prefixOf = (dayStarts: number, windowMs: number) => ({
    ...counts(1, 0),
    day: {
      starts: dayStarts,
      verified: 0,
      baseline: 0,
      raw: { starts: [dayStarts, 0], verified: [0, 0] } as never,
    },
    raw: {
      at,
      windowMs,
      starts: [1, 0] as [number, number],
      verified: [0, 0] as [number, number],
      callers: [0, 0] as [number, number],
      deducted: 0,
    },
  });

  it('a drip that holds to the end of the next day lifts at its midnight exactly, whatever the window', () => {
    const dayEnd = 102 * DAY;
    for (const windowMs of [HOUR, 7 * 60_000]) {
      const held = prefixOf(1e12, windowMs);
      expect(ruleOf('prefix', countsAt(held, dayEnd - 1), false, rules)).toBe('slow_drip');
      expect(liftsAt('prefix', held, false, at + 15 * 60_000, rules)).toBe(dayEnd);
    }
  });

  it('never before the cool-off ends, when that is past the two windows the read looks at', () => {
    const quiet = prefixOf(0, HOUR);
    expect(liftsAt('prefix', quiet, false, at + 3 * HOUR, rules)).toBe(at + 3 * HOUR);
  });

  it("past the window's two, the day's judgement lifts in steps of a window", () => {
    const held = prefixOf(40, HOUR);
    const lifts = liftsAt('prefix', held, false, at + 15 * 60_000, rules);
    expect(lifts).toBeGreaterThan(at + 2 * HOUR);
    expect(lifts % HOUR).toBe(0);
    expect(ruleOf('prefix', countsAt(held, lifts - HOUR), false, rules)).toBe('slow_drip');
    expect(ruleOf('prefix', countsAt(held, lifts), false, rules)).toBeUndefined();
  });
});
