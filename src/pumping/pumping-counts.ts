import { DAY_MS } from '../core/clock.js';
import { PAST_NETWORKS_FLAG } from './giver-shares.js';
import { RECENT_MS, WEEK_MS, type SubjectTraits } from './range-stats-keys.js';

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

/** When a start's counts were read (RangeStats.read): now, the window and its elapsed share, the UTC day and week. */
export interface ReadPeriods {
  now: number;
  windowMs: number;
  elapsed: number;
  day: number;
  week: number;
  /** The judged number's own earlier starts, taken out of its range's and prefix's (OWNER_RETRIES). */
  own: number;
}

/**
 * One subject's counts from its raw counters, as RangeStats.read lists them from `at` (`n`: each as a
 * count, `present`: as read): by its traits, its day's (5), its week's and recent starts (6), its
 * votes (a country's own: two days of PAST_NETWORKS_FLAG slots), its window's starts and verified
 * (4), its previous day's verified (else its record), its callers (2). Answers where the next begin.
 */
export function countsOf(
  t: SubjectTraits,
  n: readonly number[],
  present: readonly (string | null)[],
  at: number,
  { now, windowMs, elapsed, day, week: wk, own }: ReadPeriods,
): [SubjectCounts, number] {
  const dayCounts = t.daily ? n.slice(at, (at += 5)) : undefined;
  let networksPast = 0;
  const weekCounts = t.countryWide ? n.slice(at, (at += 6)) : undefined;
  if (t.country) {
    // Distinct networks of either UTC day (never the two added: one network is one vote).
    let today = 0;
    let yesterday = 0;
    for (let slot = 0; slot < 2 * PAST_NETWORKS_FLAG; slot++)
      if (present[at++] !== null) {
        if (slot < PAST_NETWORKS_FLAG) today++;
        else yesterday++;
      }
    networksPast = Math.max(today, yesterday);
  }
  const [sc, sp, vc, vp] = n.slice(at, (at += 4)) as [number, number, number, number];
  const previousDay = t.baseline ? n[at]! : 0;
  const known = !t.baseline && present[at] !== null;
  at++;
  const [cc, cp] = t.bursty ? n.slice(at, (at += 2)) : [0, 0];
  const mine = t.bursty ? own : 0;
  const counts: SubjectCounts = {
    starts: Math.max(0, slidingCount(sc, sp, elapsed) - mine),
    verified: slidingCount(vc, vp, elapsed),
    known,
    current: sc,
    raw: {
      at: now,
      windowMs,
      starts: [sc, sp],
      verified: [vc, vp],
      callers: [cc!, cp!],
      deducted: Math.min(mine, slidingCount(sc, sp, elapsed)),
    },
  };
  if (t.baseline) counts.baseline = (previousDay * windowMs) / DAY_MS;
  if (dayCounts) {
    const [dsc, dsp, dvc, drc, drp] = dayCounts as [number, number, number, number, number];
    const dayElapsed = (now - day * DAY_MS) / DAY_MS;
    counts.baseline = (drp * windowMs) / DAY_MS;
    counts.ranges = Math.max(drc, drp);
    counts.day = {
      starts: Math.max(0, slidingCount(dsc, dsp, dayElapsed) - mine),
      verified: slidingCount(dvc, previousDay, dayElapsed),
      baseline: drp,
      raw: { starts: [dsc, dsp], verified: [dvc, previousDay] },
    };
  }
  if (weekCounts) {
    const [wsc, wsp, wvc, wvp, rc, rp] = weekCounts as [number, number, number, number, number, number];
    counts.networksPast = networksPast;
    const weekElapsed = (now - wk * WEEK_MS) / WEEK_MS;
    counts.recent = rc + rp;
    counts.recentMs = RECENT_MS + (now % RECENT_MS);
    counts.week = {
      starts: Math.max(0, slidingCount(wsc, wsp, weekElapsed) - mine),
      verified: slidingCount(wvc, wvp, weekElapsed),
    };
  }
  if (t.bursty) {
    counts.callers = slidingCount(cc!, cp!, elapsed);
    counts.currentCallers = cc;
  }
  return [counts, at];
}
