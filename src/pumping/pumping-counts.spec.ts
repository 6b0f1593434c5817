import { describe, expect, it } from '@jest/globals';
import { DAY_MS } from '../core/clock.js';
import { countsAt, countsWith, numberRange, slidingCount, type SubjectCounts } from './pumping-counts.js';

/*
 * The counts the rules judge and the moment a hold lifts is worked out from (liftsAt, waitMs: the
 * Retry-After a held caller is told): how a subject's window rolls on, and what starts counted since the
 * read add.
 */

const WINDOW = 60_000;
const AT = 10 * WINDOW + WINDOW / 4; // a quarter into its window

/** A prefix read at AT: 8 starts now, 4 before; 2 verified now, 6 before; its day too; 2 of the starts its number's own. */
function read(): SubjectCounts {
  return {
    starts: 8 + 4 * 0.75 - 2,
    verified: 2 + 6 * 0.75,
    callers: 5 + 4 * 0.75,
    known: false,
    current: 8,
    currentCallers: 5,
    day: {
      starts: 100,
      verified: 30,
      baseline: 3,
      raw: { starts: [60, 80], verified: [20, 16] },
    },
    raw: {
      at: AT,
      windowMs: WINDOW,
      starts: [8, 4],
      verified: [2, 6],
      callers: [5, 4],
      deducted: 2,
    },
  };
}

describe('slidingCount', () => {
  it('weighs the previous window by what of it is still inside the sliding one, never below none or above all', () => {
    expect(slidingCount(10, 20, 0.25)).toBe(25);
    expect(slidingCount(10, 20, 1.5)).toBe(10);
    expect(slidingCount(10, 20, -0.5)).toBe(30);
  });
});

describe('countsAt: the counts a subject shows later, nothing started meanwhile', () => {
  it('in the next window: the current one rolls out as the previous did, the number’s own starts still taken out', () => {
    const later = countsAt(read(), 11 * WINDOW + WINDOW / 4);
    expect(later.starts).toBe(8 * 0.75 - 2);
    expect(later.verified).toBe(2 * 0.75);
    expect(later.callers).toBe(5 * 0.75);
  });

  it('two windows on: nothing of the window is left', () => {
    const later = countsAt(read(), 12 * WINDOW);
    expect([later.starts, later.verified, later.callers]).toStrictEqual([0, 0, 0]);
  });

  it('its day rolls on by days, the number’s own starts taken out of it too', () => {
    const counts = read();
    const dayStart = Math.floor(AT / DAY_MS) * DAY_MS;
    const tomorrow6am = dayStart + DAY_MS + DAY_MS / 4;
    expect(countsAt(counts, tomorrow6am).day).toMatchObject({ starts: 60 * 0.75 - 2, verified: 20 * 0.75 });
    expect(countsAt(counts, tomorrow6am).day?.baseline).toBe(3);
  });
});

describe('countsWith: starts counted since the read (or the held attempt itself) added', () => {
  it('adds the starts to the window, the day and their raw counts, and the new callers given', () => {
    const counts = read();
    const more = countsWith(counts, 3, 1);
    expect(more.starts).toBe(counts.starts + 3);
    expect(more.callers).toBe(counts.callers! + 1);
    expect(more.raw).toMatchObject({ starts: [11, 4], callers: [6, 4] });
    expect(more.day).toMatchObject({ starts: 103, raw: { starts: [63, 80], verified: [20, 16] } });
    // Rolled on, the added starts are still there.
    expect(countsAt(more, 11 * WINDOW + WINDOW / 4).starts).toBe(11 * 0.75 - 2);
  });

  it('without callers given, each start is a new caller', () => {
    const more = countsWith(read(), 2);
    expect(more.callers).toBe(read().callers! + 2);
    expect(more.raw?.callers).toStrictEqual([7, 4]);
  });
});

describe('numberRange', () => {
  it('drops the last digits, never below the plus and one digit', () => {
    expect(numberRange('+79161234567', 4)).toBe('+7916123');
    expect(numberRange('+791', 4)).toBe('+7');
  });
});
