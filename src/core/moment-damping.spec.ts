import { describe, expect, it } from '@jest/globals';
import {
  DAMPED_SHARE_PER_MINUTE,
  dampedMoment,
  PACED_MINUTES_AT_MOST,
  RECENT_RANGE_MS,
  recentMoments,
  recentRange,
  SETTLED_AFTER_MS,
  thinFiguresMoment,
} from './moment-damping.js';

const MINUTE = 60_000;

describe('dampedMoment: a jump beyond the recent range is followed at a bounded pace', () => {
  it('adopts the first moment, and any within the recent range, at once', () => {
    expect(dampedMoment([], 12_000, 0)).toStrictEqual({ afterMs: 12_000, damped: false });
    const adopted = [
      { afterMs: 30_000, at: 0 },
      { afterMs: 40_000, at: 10 * MINUTE },
    ];
    expect(dampedMoment(adopted, 30_000, 11 * MINUTE)).toStrictEqual({ afterMs: 30_000, damped: false });
    expect(dampedMoment(adopted, 35_000, 11 * MINUTE)).toStrictEqual({ afterMs: 35_000, damped: false });
  });

  it('adopts what comes while the first moment adopted is younger than SETTLED_AFTER_MS', () => {
    const adopted = [{ afterMs: 40_000, at: 0 }];
    expect(dampedMoment(adopted, 10_000, SETTLED_AFTER_MS - 1)).toStrictEqual({
      afterMs: 10_000,
      damped: false,
    });
    expect(dampedMoment(adopted, 10_000, SETTLED_AFTER_MS).damped).toBe(true);
  });

  it('a read after a long silence moves no further than PACED_MINUTES_AT_MOST minutes of pace (still damped)', () => {
    const adopted = [
      { afterMs: 40_000, at: -SETTLED_AFTER_MS },
      { afterMs: 40_000, at: 0 },
    ];
    const most = 40_000 * DAMPED_SHARE_PER_MINUTE * PACED_MINUTES_AT_MOST;
    expect(PACED_MINUTES_AT_MOST).toBe(5);
    expect(dampedMoment(adopted, 10_000, 4 * MINUTE).afterMs).toBe(40_000 - (most * 4) / 5);
    expect(dampedMoment(adopted, 10_000, 5 * MINUTE)).toStrictEqual({ afterMs: 40_000 - most, damped: true });
    expect(dampedMoment(adopted, 10_000, 30 * MINUTE)).toStrictEqual({
      afterMs: 40_000 - most,
      damped: true,
    });
  });

  it('moves at most DAMPED_SHARE_PER_MINUTE of the last moment per minute beyond the range, either way', () => {
    const adopted = [
      { afterMs: 40_000, at: -SETTLED_AFTER_MS },
      { afterMs: 40_000, at: 0 },
    ];
    const step = 40_000 * DAMPED_SHARE_PER_MINUTE;
    expect(dampedMoment(adopted, 10_000, MINUTE)).toStrictEqual({ afterMs: 40_000 - step, damped: true });
    expect(dampedMoment(adopted, 73_000, MINUTE)).toStrictEqual({ afterMs: 40_000 + step, damped: true });
    expect(dampedMoment(adopted, 10_000, 2 * MINUTE)).toStrictEqual({
      afterMs: 40_000 - 2 * step,
      damped: true,
    });
    // No time passed: no move; a target nearer than the step is reached.
    expect(dampedMoment(adopted, 10_000, 0)).toStrictEqual({ afterMs: 40_000, damped: true });
    expect(dampedMoment(adopted, 39_000, MINUTE)).toStrictEqual({ afterMs: 39_000, damped: false });
  });

  it('follows a lasting drop from 40 s to the 10 s floor within the hour, read every 30 s', () => {
    let adopted = [
      { afterMs: 40_000, at: -SETTLED_AFTER_MS },
      { afterMs: 40_000, at: 0 },
    ];
    let now = 0;
    while (adopted.at(-1)!.afterMs > 10_000 && now < 2 * RECENT_RANGE_MS) {
      now += 30_000;
      adopted = recentMoments(
        [...adopted, { afterMs: dampedMoment(adopted, 10_000, now).afterMs, at: now }],
        now,
      );
    }
    expect(now).toBeGreaterThan(30 * MINUTE);
    expect(now).toBeLessThanOrEqual(60 * MINUTE);
  });

  it('keeps the moments of the recent range and the last one, after the newest from before the range', () => {
    const oldest = { afterMs: 10_000, at: 0 };
    const old = { afterMs: 20_000, at: 1 };
    const young = { afterMs: 30_000, at: RECENT_RANGE_MS + 1 };
    expect(recentMoments([oldest, old, young], RECENT_RANGE_MS + 1)).toStrictEqual([old, young]);
    expect(recentMoments([oldest, old], 2 * RECENT_RANGE_MS)).toStrictEqual([old]);
    // After a quiet hour, the range is still known: a jump the next read sees is damped.
    const quiet = recentMoments([old, { afterMs: 20_000, at: 2 * RECENT_RANGE_MS }], 2 * RECENT_RANGE_MS);
    expect(quiet).toStrictEqual([old, { afterMs: 20_000, at: 2 * RECENT_RANGE_MS }]);
    expect(dampedMoment(quiet, 10_000, 2 * RECENT_RANGE_MS + 30_000).damped).toBe(true);
  });

  it('thin figures: the fixed moment is a jump even for a range adopted a moment ago; nothing adopted: the fixed one', () => {
    const young = [{ afterMs: 16_000, at: 0 }];
    const step = 16_000 * DAMPED_SHARE_PER_MINUTE;
    expect(thinFiguresMoment(young, 45_000, 0)).toStrictEqual({ afterMs: 16_000, damped: true });
    expect(thinFiguresMoment(young, 45_000, MINUTE)).toStrictEqual({ afterMs: 16_000 + step, damped: true });
    expect(thinFiguresMoment(young, 10_000, MINUTE)).toStrictEqual({ afterMs: 16_000 - step, damped: true });
    expect(thinFiguresMoment([], 45_000, MINUTE)).toStrictEqual({ afterMs: 45_000, damped: false });
    // Within the range: the fixed moment at once.
    expect(thinFiguresMoment([...young, { afterMs: 50_000, at: 1 }], 45_000, 2)).toStrictEqual({
      afterMs: 45_000,
      damped: false,
    });
  });
});

describe('the recent range: its bounds in time and in value', () => {
  const first = { afterMs: 10_000, at: 0 };
  const high = { afterMs: 50_000, at: 61 * MINUTE };
  const last = { afterMs: 30_000, at: 65 * MINUTE };

  it('spans the moments adopted within the hour and the last one, lowest to highest', () => {
    expect(recentRange([first, high, last], 100 * MINUTE)).toStrictEqual({ low: 30_000, high: 50_000, last });
  });

  it('leaves out a moment adopted an hour ago or earlier', () => {
    expect(recentRange([first, high, last], 121 * MINUTE)).toStrictEqual({ low: 30_000, high: 30_000, last });
    expect(dampedMoment([first, high, last], 50_000, 121 * MINUTE).damped).toBe(true);
  });

  it('is unknown for the first ten minutes after the first moment adopted: what comes is adopted', () => {
    const adopted = [{ afterMs: 40_000, at: 0 }];
    expect(recentRange(adopted, 9 * MINUTE)).toBeUndefined();
    expect(dampedMoment(adopted, 10_000, 9 * MINUTE)).toStrictEqual({ afterMs: 10_000, damped: false });
    expect(dampedMoment(adopted, 10_000, 10 * MINUTE).damped).toBe(true);
  });

  it('recentMoments with nothing before the range keeps the range alone', () => {
    const young = { afterMs: 30_000, at: RECENT_RANGE_MS };
    expect(recentMoments([young], RECENT_RANGE_MS + MINUTE)).toStrictEqual([young]);
    expect(recentMoments([], RECENT_RANGE_MS)).toStrictEqual([]);
  });
});
