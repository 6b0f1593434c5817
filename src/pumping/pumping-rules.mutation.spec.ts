import { describe, expect, it } from '@jest/globals';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import {
  doesNotConvert,
  holdStands,
  minUnconvertedFor,
  reserveRefuses,
  unconverted,
} from './pumping-rules.js';
import type { SubjectCounts } from './pumping-counts.js';

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
    expect(holdStands(counts(10, 2), rules)).toBe(false);
    expect(holdStands(counts(11, 2), rules)).toBe(true);
  });

  it('with the reserve off (reserveShare 0), nothing is refused by it even past the cap', () => {
    expect(reserveRefuses({ spentShare: 1.5, reserveShare: 0, underAttack: true, known: false })).toBe(false);
    expect(reserveRefuses({ spentShare: 1.5, reserveShare: 0.01, underAttack: true, known: false })).toBe(
      true,
    );
  });
});
