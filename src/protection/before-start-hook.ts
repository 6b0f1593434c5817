import { VerificationClientError } from '../core/verification.errors.js';
import type { LimitsOptions, StartContext } from '../options/verification.options.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';

/** The host's reason reaches the frontend: only a short code-like string passes as is. */
const REASON_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const HOOK_FAILED_RETRY_MS = 5000;

/**
 * Runs the host's `beforeStart(context)` (sync or async). `{ allow: false, reason }` (or `false`)
 * refuses with 403 `start_refused` and the host's reason. A hook that throws or answers something
 * else fails closed with 503 `service_unavailable` (`reason: before_start_failed`): money is at
 * stake, and a broken captcha check says nothing about this caller, so it is an outage to retry,
 * not a verdict. Only the error's name is logged (its message may carry the host's data).
 * Resolves to true when the hook answered `{ allow: true, challengePassed: true }` (the caller solved
 * its challenge: a pumping hold is lifted for this start).
 */
export async function runBeforeStart(
  hook: LimitsOptions['beforeStart'],
  context: StartContext,
  logger: ProtectionLog,
): Promise<boolean> {
  if (!hook) return false;
  let verdict: unknown;
  try {
    verdict = await hook(context);
  } catch (error) {
    logger.error('beforeStart hook threw; start refused', {
      error: error instanceof Error ? error.name : typeof error,
    });
    throw protectionRefusal(ProtectionRefusalReason.beforeStartFailed, HOOK_FAILED_RETRY_MS);
  }
  if (verdict === undefined || verdict === null || verdict === true) return false;
  if (typeof verdict === 'object' && (verdict as { allow?: unknown }).allow === true)
    return (verdict as { challengePassed?: unknown }).challengePassed === true;
  if (
    verdict === false ||
    (typeof verdict === 'object' && (verdict as { allow?: unknown }).allow === false)
  ) {
    const reason = typeof verdict === 'object' ? (verdict as { reason?: unknown }).reason : undefined;
    throw new VerificationClientError('start_refused', 'The start was refused', {
      reason: typeof reason === 'string' && REASON_PATTERN.test(reason) ? reason : 'refused',
    });
  }
  logger.error(
    'beforeStart hook returned neither true/undefined nor { allow: false, reason }; start refused',
  );
  throw protectionRefusal(ProtectionRefusalReason.beforeStartFailed, HOOK_FAILED_RETRY_MS);
}
