import { ProtectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';

export { ProtectionRefusalReason };

/** Whole seconds for `Retry-After`, never below 1 (0 would invite an immediate retry storm). */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** Granularity of a coarse wait: whole 5-minute steps (or the window, when shorter). */
const COARSE_STEP_MS = 300_000;

/**
 * A wait rounded up to whole steps, for refusals caused by other callers (the per-number limits):
 * an exact `Retry-After` would tell a stranger, to the second, when someone else's first start or
 * wrong code of the window happened. Never shorter than the real wait, so a retry after it passes.
 */
export function coarseWaitMs(ms: number, windowMs: number): number {
  const step = Math.min(COARSE_STEP_MS, windowMs);
  return Math.max(1, Math.ceil(ms / step)) * step;
}

/**
 * Protection's refusal for `reason`, retryable after `retryAfterMs` (`Retry-After`). Its error code
 * and status come from the reason (429 `rate_limit_exceeded` for the limits, cooldown and pumping
 * holds; 429 `too_many_wrong_codes`; 503 `service_unavailable` for the spend cap, a failing hook
 * and a start still in flight); `extra` adds fields to the problem document.
 */
export function protectionRefusal(
  reason: ProtectionRefusalReason,
  retryAfterMs: number,
  extra: Record<string, unknown> = {},
): ProtectionRefusal {
  return new ProtectionRefusal(reason, retryAfterSeconds(retryAfterMs), extra);
}
