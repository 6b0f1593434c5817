/** Times as the routes write them: ISO 8601 in UTC with milliseconds (`2026-11-24T03:46:17.702Z`). */

/** How many formatted times are kept: a few thousand sessions polled at once. */
const KEPT = 4096;
const formatted = new Map<number, string>();

/**
 * `date.toISOString()`, kept per time: a session's end and its fallback time are written again on
 * every poll of it (every 2.5 s or so, for minutes), and V8's formatting of a date costs more than
 * the rest of its answer's fields together. Past the bound, the kept ones are dropped at once.
 */
export function isoTime(date: Date): string {
  const ms = date.getTime();
  let text = formatted.get(ms);
  if (text === undefined) {
    text = date.toISOString(); // an invalid date throws here, as it always did
    if (formatted.size >= KEPT) formatted.clear();
    formatted.set(ms, text);
  }
  return text;
}
