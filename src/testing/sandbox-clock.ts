import { ArgumentRangeError } from '../core/phone-verification.error.js';
/**
 * The sandbox's virtual clock: real time plus an offset that only grows. Tests move it forward with
 * `advance` instead of sleeping, and everything timed in the sandbox (TTLs, auto-delivery, operator
 * results, webhook retries, timestamps) reads this clock. A frozen clock starts at real time and then
 * moves only by `advance`, for tests that assert exact millisecond boundaries.
 */
export class SandboxClock {
  private offsetMs = 0;
  private readonly frozenAt: number | undefined;

  constructor(frozen = false) {
    this.frozenAt = frozen ? Date.now() : undefined;
  }

  /** Virtual time, ms since the epoch. */
  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offsetMs;
  }

  /** Moves virtual time forward by `ms` (negative values are refused: time in the sandbox never goes back). */
  moveForward(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new ArgumentRangeError('advance needs a finite, non-negative number of ms');
    this.offsetMs += ms;
  }
}
