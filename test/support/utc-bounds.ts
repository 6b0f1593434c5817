/**
 * The UTC bounds the module's windows turn at: the day (spend cap, figures, pumping days) and the week
 * (`Math.floor(ms / WEEK_MS)`: weeks start on a Thursday at 00:00 UTC, as the epoch did). The sandbox clock
 * starts at real time, so a test whose minutes or days must stay in one window moves its clock just past a
 * bound first; one that does not fails only at some times of day (CI at 23:40 UTC) or days of the week.
 */
export const DAY_MS = 86_400_000;
export const WEEK_MS = 7 * DAY_MS;

/** How far a clock standing at `now` moves to stand one second past the next start of a `period` (DAY_MS, WEEK_MS). */
export function toJustPast(now: number, period: number): number {
  return period - (now % period) + 1_000;
}
