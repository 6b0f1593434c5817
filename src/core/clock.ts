import { ArgumentRangeError } from './phone-verification.error.js';
/**
 * Time in the module is the `clock` option's (ms since the epoch): the store it creates, the services
 * and the webhook tolerance all read it, so a test that links it to the sandbox
 * (`clock: () => sandbox.now()`) moves every timer at once.
 */

/** One UTC day in ms (the day counters, the daily windows). */
export const DAY_MS = 86_400_000;

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** The UTC date (`YYYY-MM-DD`) of an instant on the module's clock. */
export function utcDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * A calendar date as `YYYY-MM-DD`, from that form or a Date, else a RangeError naming `where` and
 * `field` (`getUsage: "from" must be …`). 2026-02-31 is refused (Date.parse would roll it over).
 */
export function calendarDate(where: string, field: string, value: string | Date): string {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime()))
      throw new ArgumentRangeError(`${where}: "${field}" is an invalid Date`);
    return utcDate(value.getTime());
  }
  if (typeof value !== 'string' || !DATE_ONLY.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)))
    throw new ArgumentRangeError(`${where}: "${field}" must be a date like 2026-01-31 or a Date`);
  if (utcDate(Date.parse(`${value}T00:00:00Z`)) !== value)
    throw new ArgumentRangeError(`${where}: "${field}" is not a calendar date`);
  return value;
}
