/**
 * Time in the module is the `clock` option's (ms since the epoch): the store it creates, the services
 * and the webhook tolerance all read it, so a test that links it to the sandbox
 * (`clock: () => sandbox.now()`) moves every timer at once.
 */

/** One UTC day in ms (the day counters, the daily windows). */
export const DAY_MS = 86_400_000;
