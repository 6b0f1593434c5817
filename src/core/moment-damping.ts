/**
 * A learned fallback moment that jumps beyond its recent range is not adopted at once: it moves
 * there at a bounded pace, so figures pushed in a burst (poisoned, or a short blip) change little
 * before they are seen, while a lasting change (an operator's outage) is followed within the hour.
 * Pure; FallbackTiming keeps the moments it adopted.
 */

/** How far back the moments adopted make the recent range. */
export const RECENT_RANGE_MS = 60 * 60_000;
/**
 * A range is known once the moments adopted span this long: before, a young host's or a new
 * instance's first reads (their figures still maturing) are adopted as they come.
 */
export const SETTLED_AFTER_MS = 10 * 60_000;
/** Beyond its recent range, a moment moves by at most this share of where it stands per minute. */
export const DAMPED_SHARE_PER_MINUTE = 0.03;
/**
 * The most minutes of that pace one adoption takes: a quiet cell read after a long silence moves no
 * further than this much pace, so figures poisoned in the silence are still damped (and reported).
 */
export const PACED_MINUTES_AT_MOST = 5;

/** A moment adopted, ms after a step's start, and when (module clock). */
export interface AdoptedMoment {
  afterMs: number;
  at: number;
}

/**
 * The moment to adopt at `now` when the figures say `learned`, given the moments adopted before
 * (oldest first): `learned` itself when nothing was adopted or it lies within the range of those of
 * the last RECENT_RANGE_MS (and the last one), or the first was adopted less than `settledAfterMs`
 * (SETTLED_AFTER_MS) ago; else the last moment moved toward it by at most
 * DAMPED_SHARE_PER_MINUTE of itself per minute since it was adopted, PACED_MINUTES_AT_MOST minutes at
 * most (`damped`: true).
 */
export function dampedMoment(
  adopted: readonly AdoptedMoment[],
  learned: number,
  now: number,
  settledAfterMs = SETTLED_AFTER_MS,
): { afterMs: number; damped: boolean } {
  const range = recentRange(adopted, now, settledAfterMs);
  if (range === undefined || (learned >= range.low && learned <= range.high))
    return { afterMs: learned, damped: false };
  const { low, high, last } = range;
  const minutes = Math.min(Math.max(now - last.at, 0) / 60_000, PACED_MINUTES_AT_MOST);
  const step = last.afterMs * DAMPED_SHARE_PER_MINUTE * minutes;
  const afterMs = Math.round(
    Math.min(Math.max(learned, Math.min(low, last.afterMs - step)), Math.max(high, last.afterMs + step)),
  );
  return { afterMs, damped: afterMs !== learned };
}

/**
 * The range of the moments adopted over the last RECENT_RANGE_MS and the last one, at `now`; none while
 * it is not known (nothing adopted, or the first adopted less than `settledAfterMs` ago).
 */
export function recentRange(
  adopted: readonly AdoptedMoment[],
  now: number,
  settledAfterMs = SETTLED_AFTER_MS,
): { low: number; high: number; last: AdoptedMoment } | undefined {
  const last = adopted.at(-1);
  if (last === undefined || adopted[0]!.at > now - settledAfterMs) return undefined;
  const recent = adopted.filter((moment) => moment.at > now - RECENT_RANGE_MS).map((m) => m.afterMs);
  return { low: Math.min(last.afterMs, ...recent), high: Math.max(last.afterMs, ...recent), last };
}

/**
 * The moment to adopt at `now` when figures that taught a moment turn thin (fewer than `minSamples`,
 * as a young host's do while its figures mature, or a quiet one's as days leave the window): thin
 * figures are no evidence, so the host's `fixed` moment is a jump like any other, followed at the
 * damped pace from the last moment adopted, however young the range (dampedMoment). Nothing adopted:
 * `fixed`.
 */
export function thinFiguresMoment(
  adopted: readonly AdoptedMoment[],
  fixed: number,
  now: number,
): { afterMs: number; damped: boolean } {
  return dampedMoment(adopted, fixed, now, 0);
}

/**
 * The adopted moments worth keeping at `now`: those of the recent range and the last one, after the newest
 * from before the range, which stays first: a range known before a quiet hour is known still (the settled
 * check reads the first), so a farm's burst after the silence is damped, never adopted as a young host's.
 */
export function recentMoments(adopted: readonly AdoptedMoment[], now: number): AdoptedMoment[] {
  const kept = adopted.filter((moment) => moment.at > now - RECENT_RANGE_MS);
  const before = adopted.filter((moment) => moment.at <= now - RECENT_RANGE_MS).at(-1);
  const last = adopted.at(-1);
  const older = before === undefined ? [] : [before];
  return last !== undefined && kept.at(-1) !== last && last !== before
    ? [...older, ...kept, last]
    : [...older, ...kept];
}
