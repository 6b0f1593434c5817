/**
 * The module's one clock, in ms since the epoch. The module provides it once (from the `clock`
 * option); the store it creates, the services and the webhook tolerance all read it, so a test
 * that links it to the sandbox (`clock: () => sandbox.now()`) moves every timer at once.
 */
export interface VerificationClock {
  now(): number;
}

/** Injection token, same name as the interface (as `VerificationStore`). */
export const VerificationClock = Symbol('VerificationClock');

/** One UTC day in ms (the day counters, the daily windows). */
export const DAY_MS = 86_400_000;
