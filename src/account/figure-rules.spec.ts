import { describe, expect, it } from '@jest/globals';
import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import { chooseFirstMethods, expectedOf, standInFor, type MethodOutlook } from './first-method.js';
import { sums } from '../../test/support/method-stats.fixture.js';
import { nextHealth, ratesOf, sumsSince, windowSince } from './method-health.js';
import { completedWithin, pickCell, type CellFigures } from './operator-figures.js';

/*
 * The figures' rules read by hand: a user's expected outcome per billing rule and code entry, the
 * rates and cells shown to operations, and the edges of each (nothing ended, nothing delivered,
 * more delivered than started, ties).
 */

/** `ended` sessions; `atMs → verified` of them, each in the bucket ending at its key. */
function figures(
  ended: number,
  verifiedAt: Record<number, number>,
  delivery: number | null = null,
): CellFigures {
  const buckets = Array<number>(TIME_TO_VERIFY_BUCKETS_MS.length + 1).fill(0);
  let verified = 0;
  for (const [at, n] of Object.entries(verifiedAt)) {
    buckets[TIME_TO_VERIFY_BUCKETS_MS.indexOf(Number(at))] = n;
    verified += n;
  }
  return { level: 'country', ended, verified, completion: verified / ended, delivery, buckets };
}
const outlook = (
  method: MethodOutlook['method'],
  f: CellFigures,
  priceMinor: number,
  fallbackMs = 60_000,
): MethodOutlook => ({ method, figures: f, priceMinor, fallbackMs });

/** SMS: 85 % verified, half within 5 s, half within (45 s, 60 s]; 98 % delivered; 3 RUB. */
const SMS = outlook('sms', figures(1000, { 5_000: 425, 60_000: 425 }, 0.98), 300);
/** 80 % verified, all within (20 s, 30 s]: 40 % by 25 s. */
const LATE = figures(1000, { 30_000: 800 });

describe('expectedOf: a user starting with a method, then SMS', () => {
  it('SMS alone: charged on delivery (price × delivered share; every start when deliveries are not shown)', () => {
    expect(expectedOf(SMS, SMS, 30_000).costMinor).toBeCloseTo(294);
    expect(expectedOf(SMS, SMS, 30_000).verified).toBeCloseTo(0.85);
    const unshown = outlook('sms', figures(1000, { 5_000: 850 }), 300);
    expect(expectedOf(unshown, unshown, 30_000).costMinor).toBe(300);
  });

  it('a method charged at initiation costs its price, whatever became of it', () => {
    const otp = outlook('msgr1_otp', figures(1000, { 5_000: 500 }, 0.5), 150);
    expect(expectedOf(otp, otp, 30_000).costMinor).toBe(150);
  });

  it('a reverse call (charged on verified, completed outside the page): late completions count, once', () => {
    const e = expectedOf(outlook('reverse_flash_call', LATE, 25, 25_000), SMS, 30_000);
    // 40 % by its moment, 80 % in all: 60 % switch, 10 % of them leave; of the 54 % switched, the
    // reverse call's own late ones (40 of 60) need no SMS.
    expect(e.verified).toBeCloseTo(0.8 + 0.54 * (1 / 3) * 0.85);
    expect(e.costMinor).toBeCloseTo(25 * 0.8 + 0.54 * 294);
    // Within 30 s: its own 80 %, and the switched by SMS within the 5 s left (42.5 %).
    expect(e.withinBudget).toBeCloseTo(0.8 + 0.54 * (1 / 3) * 0.425);
  });

  it('a flash call (code typed in the page) is cut off at its moment; within a budget before it, its own only', () => {
    const e = expectedOf(outlook('flash_call', LATE, 80, 25_000), SMS, 22_000);
    expect(e.verified).toBeCloseTo(0.4 + 0.54 * 0.85);
    expect(e.costMinor).toBeCloseTo(80 + 0.54 * 294);
    // 16 % by 22 s (two tenths of the bucket); the switch at 25 s comes after the budget.
    expect(e.withinBudget).toBeCloseTo(0.16);
  });

  it('a method every user completes within its moment sends nobody to SMS', () => {
    const fast = outlook('reverse_flash_call', figures(1000, { 10_000: 1000 }), 25, 25_000);
    expect(expectedOf(fast, SMS, 30_000)).toStrictEqual({ verified: 1, costMinor: 25, withinBudget: 1 });
  });
});

describe('chooseFirstMethods: edges', () => {
  const good = (method: MethodOutlook['method']) =>
    outlook(method, figures(1000, { 5_000: 950 }, 0.98), 100, 30_000);

  it('a device with no starts (weight 0) gets no choice', () => {
    const candidates = [SMS, good('flash_call')];
    expect(chooseFirstMethods([{ device: 'mobile', weight: 1, candidates }]).get('mobile')).toBe(
      'flash_call',
    );
    expect(chooseFirstMethods([{ device: 'desktop', weight: 0, candidates }]).size).toBe(0);
  });

  it('of two methods alike, the one listed first', () => {
    const candidates = [SMS, good('flash_call'), good('voice')];
    expect(chooseFirstMethods([{ device: 'mobile', weight: 1, candidates }]).get('mobile')).toBe(
      'flash_call',
    );
    const [a, b] = [good('voice'), good('flash_call')];
    expect(standInFor([a, b])).toBe(a);
  });

  it('SMS with figures but no verified user: judged against the stand-in, not against nothing', () => {
    const silent = outlook('sms', figures(1000, {}, 0.98), 300);
    const reverse = outlook('reverse_flash_call', figures(1000, { 10_000: 700 }), 25, 30_000);
    const chosen = chooseFirstMethods([{ device: 'mobile', weight: 1, candidates: [silent, reverse] }]);
    expect(chosen.get('mobile')).toBe('reverse_flash_call');
  });
});

describe('rates and cells shown to operations', () => {
  it('completion: none when nothing ended; delivery: none when nothing started or nothing delivered, at most 1', () => {
    expect(ratesOf(sums({}))).toStrictEqual({ started: 0, ended: 0, completion: null, delivery: null });
    expect(ratesOf(sums({ started: 0, delivered: 3 })).delivery).toBeNull();
    expect(ratesOf(sums({ started: 10, delivered: 0 })).delivery).toBeNull();
    expect(ratesOf(sums({ started: 100, delivered: 30 })).delivery).toBeCloseTo(0.3);
    expect(ratesOf(sums({ started: 10, delivered: 12 })).delivery).toBe(1);
    expect(ratesOf(sums({ verified: 3, rescued: 1 })).completion).toBeCloseTo(0.75);
  });

  it('a window’s buckets: a bucket the older read lacks counts whole', () => {
    expect(sumsSince(sums({ buckets: [5, 3, 2] }), sums({ buckets: [1] })).buckets).toStrictEqual([4, 3, 2]);
    // A counter lower than the older read's (its key evicted or lost since) adds nothing, never less.
    expect(sumsSince(sums({ started: 3, rescued: 1 }), sums({ started: 5, rescued: 4 }))).toMatchObject({
      started: 0,
      rescued: 0,
    });
  });

  it('a window across UTC midnight: a new day whole, a day read then less what it held, an older day nothing', () => {
    const then = { day: 10, days: [sums({ started: 5, verified: 4 }), sums({ started: 50, verified: 40 })] };
    const now = {
      day: 11,
      days: [
        sums({ started: 3, verified: 1 }), // day 11, after then's: whole
        sums({ started: 8, verified: 6 }), // day 10, then's own: 3 started and 2 verified since
        sums({ started: 51, verified: 42 }), // day 9, then's day before: a late end since
        sums({ started: 900, verified: 800 }), // day 8, older than what then kept: before the window
      ],
    };
    expect(windowSince(now, then)).toMatchObject({ started: 3 + 3 + 1, verified: 1 + 2 + 2 });
    // The same day: the difference only.
    expect(windowSince({ day: 10, days: [sums({ started: 9, verified: 7 })] }, then)).toMatchObject({
      started: 4,
      verified: 3,
    });
  });

  it('a health that stays keeps when it began', () => {
    const healthy = { state: 'healthy' as const, since: 5 };
    expect(nextHealth(healthy, 'recovered', 1_000)).toStrictEqual(healthy);
    expect(nextHealth(healthy, 'dropped', 1_000)).toStrictEqual({ state: 'degraded', since: 1_000 });
  });

  it('a cell ends its verified, expired and failed sessions less the unproven; its delivery as the rates’', () => {
    expect(pickCell([])).toBeUndefined();
    const cell = sums({ verified: 20, expired: 5, failed: 7, unproven: 2, started: 40, delivered: 10 });
    expect(pickCell([cell])).toMatchObject({ level: 'operator', ended: 30, delivery: 0.25 });
    expect(pickCell([sums({ ...cell, unproven: 3 })])).toBeUndefined();
    expect(pickCell([sums({ ...cell, delivered: 0 })])?.delivery).toBeNull();
    expect(pickCell([sums({ ...cell, started: 0 })])?.delivery).toBeNull();
    expect(pickCell([sums({ ...cell, delivered: 50 })])?.delivery).toBe(1);
  });

  it('completed within a time inside the first bucket: its share of that bucket', () => {
    const f = figures(100, { 5_000: 40 });
    expect(completedWithin(f, 2_500)).toBeCloseTo(0.2);
  });
});
