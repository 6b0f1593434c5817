import { describe, expect, it } from '@jest/globals';
import { operatorPrefixOf } from '../core/operator-prefix.js';
import { countsAt, numberRange, slidingCount, type SubjectCounts } from './pumping-counts.js';
import {
  liftsAt,
  coolOffMs,
  converting,
  countryUnderAttack,
  doesNotConvert,
  freshBurst,
  minUnconvertedFor,
  reserveRefuses,
  ruleOf,
} from './pumping-rules.js';
import { subjectToHold } from './pumping-verdict.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';

const rules = VERIFICATION_DEFAULTS.limits.pumping;
const counts = (starts: number, verified: number, extra: Partial<SubjectCounts> = {}): SubjectCounts => ({
  starts,
  verified,
  known: false,
  ...extra,
});

describe('pumping rules', () => {
  it('a subject is held only past the minimum of unconverted starts, below the conversion floor', () => {
    expect(doesNotConvert(counts(19, 0), 20, rules)).toBe(false);
    expect(doesNotConvert(counts(20, 0), 20, rules)).toBe(true);
    // 20 % of its starts completed: converts.
    expect(doesNotConvert(counts(40, 8), 20, rules)).toBe(false);
    expect(doesNotConvert(counts(40, 7), 20, rules)).toBe(true);
  });

  it('a range or country is held only when its starts jump past surgeFactor times its normal rate', () => {
    expect(doesNotConvert(counts(30, 0, { baseline: 10 }), 20, rules)).toBe(false);
    expect(doesNotConvert(counts(31, 0, { baseline: 10 }), 20, rules)).toBe(true);
    expect(doesNotConvert(counts(30, 0, { baseline: 0 }), 20, rules)).toBe(true);
  });

  it('the burst signature: a range or prefix with no history, unconverted starts from freshMinStarts distinct callers', () => {
    expect(freshBurst('range', counts(3, 0, { callers: 2 }), rules)).toBe(false);
    expect(freshBurst('range', counts(3, 0, { callers: 3 }), rules)).toBe(true);
    // One caller's many starts are not a burst (the normal minimum is theirs).
    expect(freshBurst('range', counts(19, 0, { callers: 1 }), rules)).toBe(false);
    expect(freshBurst('prefix', counts(9, 0, { callers: 9 }), rules)).toBe(false);
    expect(freshBurst('prefix', counts(10, 0, { callers: 10 }), rules)).toBe(true);
    // A history (a number verified yesterday or in the window) takes the normal minimum.
    expect(freshBurst('range', counts(5, 0, { callers: 5, baseline: 0.5 }), rules)).toBe(false);
    expect(freshBurst('range', counts(5, 1, { callers: 5 }), rules)).toBe(false);
    expect(freshBurst('owner', counts(50, 0, { callers: 50 }), rules)).toBe(false);
    expect(ruleOf('range', counts(3, 0, { callers: 3 }), false, rules)).toBe('fresh_burst');
    expect(ruleOf('range', counts(20, 0, { callers: 1 }), false, rules)).toBe('unconverted');
    expect(ruleOf('range', counts(1, 0, { callers: 1 }), true, rules)).toBe('country_under_attack');
    expect(ruleOf('range', counts(1, 0, { callers: 1 }), false, rules)).toBeUndefined();
  });

  it('under attack, subjects without a record get the lower minimum; known ones keep the normal one', () => {
    expect(minUnconvertedFor('owner', counts(0, 0), false, rules)).toBe(20);
    expect(minUnconvertedFor('range', counts(0, 0), true, rules)).toBe(1);
    expect(minUnconvertedFor('owner', counts(0, 0, { known: true }), true, rules)).toBe(20);
    expect(minUnconvertedFor('client', counts(0, 0), true, { ...rules, callerMinStarts: 1 })).toBe(1);
  });

  it('the country decides "under attack" at its own minimum', () => {
    expect(countryUnderAttack(counts(19, 0), rules)).toBe(false);
    expect(countryUnderAttack(counts(20, 0), rules)).toBe(true);
    expect(countryUnderAttack(counts(200, 100), rules)).toBe(false);
  });

  it('subjectToHold picks the first subject that does not convert, in the given order', () => {
    const subjects = [
      { kind: 'range' as const, counts: counts(2, 0) },
      { kind: 'owner' as const, counts: counts(5, 0) },
      { kind: 'client' as const, counts: counts(9, 0) },
    ];
    expect(subjectToHold(subjects, false, rules)).toBeUndefined();
    expect(subjectToHold(subjects, true, rules)?.kind).toBe('range');
    expect(subjectToHold(subjects, false, { ...rules, callerMinStarts: 5 })?.kind).toBe('owner');
  });

  it('a shared address is not held for a start whose range and prefix convert; an owner still is', () => {
    const strict = { ...rules, callerMinStarts: 5 };
    const converting = counts(10, 8, { baseline: 1 });
    const address = [
      { kind: 'range' as const, counts: converting },
      { kind: 'prefix' as const, counts: converting },
      { kind: 'network' as const, counts: counts(40, 0) },
    ];
    expect(subjectToHold(address, false, strict)).toBeUndefined();
    expect(
      subjectToHold([...address, { kind: 'owner' as const, counts: counts(9, 0) }], false, strict)?.kind,
    ).toBe('owner');
    const notConverting = [
      { kind: 'range' as const, counts: counts(1, 0, { baseline: 1 }) },
      ...address.slice(1),
    ];
    expect(subjectToHold(notConverting, false, strict)?.kind).toBe('network');
  });

  it('the operator prefix is the calling code and the national destination code', () => {
    const of = operatorPrefixOf;
    expect(of('+79851234567')).toBe('+7985');
    expect(of('+442079460000')).toBe('+4420');
    expect(of('+12133734253')).toBe('+1213');
  });

  it('a running hold is let go once its subject converts again (its first users completed)', () => {
    expect(converting(counts(2, 0), rules)).toBe(false);
    expect(converting(counts(0, 0), rules)).toBe(false);
    expect(converting(counts(10, 1), rules)).toBe(false);
    expect(converting(counts(2, 1), rules)).toBe(true);
  });

  it('the cool-off doubles with each hold in a row, up to the maximum', () => {
    expect([0, 1, 2, 3, 7, 100].map((level) => coolOffMs(level, 900_000, 86_400_000))).toStrictEqual([
      900_000, 1_800_000, 3_600_000, 7_200_000, 86_400_000, 86_400_000,
    ]);
  });

  it('the reserve refuses unknown starts past 1 - reserveShare of the cap, only while the country is under attack', () => {
    const base = { spentShare: 0.8, reserveShare: 0.2, underAttack: true, known: false };
    expect(reserveRefuses(base)).toBe(true);
    expect(reserveRefuses({ ...base, spentShare: 0.79 })).toBe(false);
    expect(reserveRefuses({ ...base, known: true })).toBe(false);
    expect(reserveRefuses({ ...base, underAttack: false })).toBe(false);
    expect(reserveRefuses({ ...base, reserveShare: 0 })).toBe(false);
  });

  it('the sliding count weighs the previous window by what is left of it; a range drops the last digits', () => {
    expect(slidingCount(4, 10, 0.25)).toBe(11.5);
    expect(slidingCount(4, 10, 1)).toBe(4);
    expect(numberRange('+79161234567', 4)).toBe('+7916123');
    expect(numberRange('+79161234567', 8)).toBe('+791');
  });

  describe('liftsAt: when a hold really lifts', () => {
    const HOUR = 3_600_000;
    // A fresh range read 10 minutes into a window: 5 starts of new numbers from new callers.
    const at = 100 * HOUR + 10 * 60_000;
    const fresh = {
      starts: 5,
      verified: 0,
      known: false,
      callers: 5,
      baseline: 0,
      raw: {
        at,
        windowMs: HOUR,
        starts: [5, 0] as [number, number],
        verified: [0, 0] as [number, number],
        callers: [5, 0] as [number, number],
        deducted: 0,
      },
    };

    it('not at the cool-off end while the window still holds the burst: once it has rolled below the minimum', () => {
      const until = at + 15 * 60_000;
      const lifts = liftsAt('range', fresh, false, until, rules);
      // 5 callers slide below freshRangeMinStarts (3) 40 % into the next window (to a minute's step).
      expect(lifts).toBeGreaterThan(101 * HOUR + 0.4 * HOUR);
      expect(lifts).toBeLessThanOrEqual(101 * HOUR + 0.4 * HOUR + 60_000);
      expect(ruleOf('range', countsAt(fresh, lifts - 2 * 60_000), false, rules)).toBe('fresh_burst');
      expect(ruleOf('range', countsAt(fresh, lifts), false, rules)).toBeUndefined();
    });

    it('at the cool-off end when the window no longer holds the subject by then, and then without raw counts', () => {
      const until = 103 * HOUR;
      expect(liftsAt('range', fresh, false, until, rules)).toBe(until);
      const { raw: _raw, ...withoutRaw } = fresh;
      expect(liftsAt('range', withoutRaw, false, at + 60_000, rules)).toBe(at + 60_000);
    });
  });
});
