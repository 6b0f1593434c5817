import { DAY_MS } from '../core/clock.js';

/**
 * The pumping defence's counts as the rules see them: one subject's figures in the sliding window
 * (and, for prefixes and countries, over the last day), how they roll on with time, and the places a
 * number is counted under (its range and operator prefix). Pure: RangeStats reads them from the store.
 */

/** One subject's counts in the sliding window, before the start being judged. */
export interface SubjectCounts {
  /** Starts that could be charged, each one, and attempts a hold refused (money, not numbers). */
  starts: number;
  /** Distinct numbers verified (a number verified again in the window is not a new proof). */
  verified: number;
  /**
   * The normal rate per window, from the previous day, else undefined: for a range its distinct
   * verified numbers, for a prefix or country its distinct ranges verified in (each range vouches
   * once: a farm of numbers in one range is one proof). Only proofs raise it, never starts.
   */
  baseline?: number;
  /**
   * Prefixes and countries: the distinct ranges a number was verified in, today or yesterday
   * (whichever is more): their history.
   */
  ranges?: number;
  /** Prefixes and countries: their counts over the last day (the slow drip's judgement). */
  day?: DayCounts;
  /** Countries: starts and distinct numbers verified (a day each) over the last week (the slowest drip). */
  week?: { starts: number; verified: number };
  /** Countries: distinct networks past their share that started today or yesterday (giver-shares.ts). */
  networksPast?: number;
  /** Countries: starts of the last five to ten minutes, whose users may still be typing their code. */
  recent?: number;
  /** Countries: how long `recent` covers, ms (five minutes and the current one's elapsed part). */
  recentMs?: number;
  /** Ranges, prefixes and countries: the share of paid starts its country's users complete (the prior). */
  expected?: number;
  /** A caller's completed verification within `recordTtlMs` (callers only). */
  known: boolean;
  /** The current fixed window's raw start count (to add starts counted concurrently since the read). */
  current?: number;
  /** Ranges and prefixes: starts of a number new to it from a caller new to it, in the window (the burst signature). */
  callers?: number;
  /** The current fixed window's raw count of distinct callers. */
  currentCallers?: number;
  /**
   * The raw fixed-window counts the sliding figures were read from, and when (so that a hold can
   * say when the window will have rolled enough to admit the subject): see countsAt.
   */
  raw?: RawWindow;
}

/** A prefix's or country's counts over a sliding day (two UTC days, the previous weighted by its overlap). */
export interface DayCounts {
  /** Starts that could be charged, and attempts a hold refused. */
  starts: number;
  /** Distinct numbers verified. */
  verified: number;
  /** Distinct ranges verified in on the previous UTC day: its normal daily rate. */
  baseline: number;
  /** The two UTC days' raw counts: starts and verified, current then previous. */
  raw?: { starts: [number, number]; verified: [number, number] };
}

/** A subject's two fixed windows as read (current and previous), at `at`. */
export interface RawWindow {
  at: number;
  windowMs: number;
  starts: [current: number, previous: number];
  verified: [current: number, previous: number];
  callers: [current: number, previous: number];
  /** Taken out of the sliding start count (the judged number's own retries). */
  deducted: number;
}

/** Counts over a sliding window from two fixed windows: the current one and the previous one, weighted by its overlap. */
export function slidingCount(current: number, previous: number, elapsedShare: number): number {
  const share = Math.min(Math.max(elapsedShare, 0), 1);
  return current + previous * (1 - share);
}

/** A pair of fixed windows of `size` read at `from`, as the sliding count will show it at `at`. */
function rolled([current, previous]: [number, number], from: number, at: number, size: number): number {
  const w0 = Math.floor(from / size);
  const w = Math.floor(at / size);
  const elapsed = (at - w * size) / size;
  return w === w0 ? slidingCount(current, previous, elapsed) : w === w0 + 1 ? current * (1 - elapsed) : 0;
}

/** The counts a subject will show at `at` when nothing is started or verified meanwhile. */
export function countsAt(counts: SubjectCounts, at: number): SubjectCounts {
  const raw = counts.raw;
  if (raw === undefined) return counts;
  const slide = (pair: [number, number]): number => rolled(pair, raw.at, at, raw.windowMs);
  const day = counts.day;
  const daySlide = (pair: [number, number]): number => rolled(pair, raw.at, at, DAY_MS);
  return {
    ...counts,
    starts: Math.max(0, slide(raw.starts) - raw.deducted),
    verified: slide(raw.verified),
    ...(counts.callers === undefined ? {} : { callers: slide(raw.callers) }),
    ...(day?.raw === undefined
      ? {}
      : {
          day: {
            ...day,
            starts: Math.max(0, daySlide(day.raw.starts) - raw.deducted),
            verified: daySlide(day.raw.verified),
          },
        }),
  };
}

/**
 * `counts` with `n` more starts in the current window (and day), each taken as a new number from a
 * new caller: the starts counted concurrently since the read, or the held attempt itself (when in
 * doubt, a hold is said to lift later, not sooner).
 */
export function countsWith(counts: SubjectCounts, n: number, callers = n): SubjectCounts {
  const day = counts.day;
  return {
    ...counts,
    starts: counts.starts + n,
    ...(counts.callers === undefined ? {} : { callers: counts.callers + callers }),
    ...(day === undefined
      ? {}
      : {
          day: {
            ...day,
            starts: day.starts + n,
            ...(day.raw === undefined
              ? {}
              : { raw: { ...day.raw, starts: [day.raw.starts[0] + n, day.raw.starts[1]] } }),
          },
        }),
    ...(counts.raw === undefined
      ? {}
      : {
          raw: {
            ...counts.raw,
            starts: [counts.raw.starts[0] + n, counts.raw.starts[1]],
            callers: [counts.raw.callers[0] + callers, counts.raw.callers[1]],
          },
        }),
  };
}

/** The range of an E.164 number: without its last `digits` digits (never shorter than `+` and one digit). */
export function numberRange(e164: string, digits: number): string {
  return e164.slice(0, Math.max(2, e164.length - digits));
}
