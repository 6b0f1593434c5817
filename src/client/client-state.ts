import type { VerificationClientError } from './errors.js';
import type { StatusAnswer, VerificationState } from './types.js';
import { phaseOf } from './user-prompt.js';

/** The state before any start, and after `reset()`. */
export const IDLE: VerificationState = {
  phase: 'idle',
  verificationId: null,
  method: null,
  status: null,
  phoneNumber: null,
  prompt: null,
  attemptsRemaining: null,
  resumed: false,
  expiresAt: null,
  expiresInMs: null,
  resendAvailableAt: null,
  resendInMs: null,
  canResend: false,
  methodsTried: [],
  switchMethods: [],
  fallbackAvailableAt: null,
  fallbackInMs: null,
  canSwitch: false,
  error: null,
  retryInMs: null,
  connection: null,
};
export const dateMs = (value: string | null | undefined): number | null => (value ? Date.parse(value) : null);
const leftMs = (at: number | null, now: number): number | null =>
  at === null ? null : Math.max(0, Math.round((at - now) / 1000) * 1000);
/**
 * Until when a refusal makes the user wait: a 429's `Retry-After`. A 503's is honoured by the
 * automatic reads (backoff); a person may retry at once.
 */
export const waitUntil = (error: VerificationClientError | null): number | null =>
  error?.status === 429 ? error.retryUntil : null;

/** Countdowns in whole seconds, so that a tick changes the state once a second. */
export function withCountdowns(
  state: VerificationState,
  now: number,
  canResendAtAll: boolean,
): VerificationState {
  const pending = state.phase === 'awaiting_user' || state.phase === 'verifying';
  const resendInMs = pending ? leftMs(state.resendAvailableAt, now) : null;
  const canSwitchAtAll = state.switchMethods.length > 0;
  // A method that failed or expired may be left at once (the server says so too).
  const fallbackInMs = pending
    ? leftMs(state.fallbackAvailableAt, now)
    : (state.phase === 'failed' || state.phase === 'expired') && canSwitchAtAll
      ? 0
      : null;
  let error = state.error;
  let retryInMs = leftMs(waitUntil(error), now);
  // The wait is over: the refusal no longer applies.
  if (retryInMs === 0) [error, retryInMs] = [null, null];
  return {
    ...state,
    error,
    retryInMs,
    expiresInMs: pending ? leftMs(state.expiresAt, now) : null,
    resendInMs,
    canResend: pending && canResendAtAll && (resendInMs ?? 0) === 0,
    fallbackInMs,
    canSwitch: canSwitchAtAll && fallbackInMs === 0,
  };
}

/** The state a status answer (or a start's, a switch's) makes of `state`, with `extra` fields. */
export function answered(
  state: VerificationState,
  answer: StatusAnswer,
  extra: Partial<VerificationState>,
  codeAccepted: boolean,
): VerificationState {
  const { phase, prompt } = phaseOf(answer, codeAccepted);
  const tried = state.methodsTried;
  return {
    ...state,
    ...extra,
    phase,
    prompt,
    verificationId: answer.verification_id,
    method: answer.method,
    status: answer.status,
    expiresAt: dateMs(answer.expires_at),
    // A server without journeys says nothing of these: one method, nothing to switch to.
    methodsTried: answer.methods_tried ?? (tried.includes(answer.method) ? tried : [...tried, answer.method]),
    switchMethods: answer.switch_methods ?? [],
    fallbackAvailableAt: dateMs(answer.fallback_available_at),
  };
}

/** The state a refused check leaves: failed once no attempt is left (or the session is unknown), else awaiting the user. */
export function afterCheckRefusal(
  state: VerificationState,
  refusal: VerificationClientError,
): VerificationState {
  const attempts = refusal.attemptsRemaining;
  // No attempt left: the API fails the session (the status route will say so too).
  if (refusal.code === 'not_found' || attempts === 0)
    return {
      ...state,
      phase: 'failed',
      status: attempts === 0 ? 'failed' : state.status,
      attemptsRemaining: attempts ?? state.attemptsRemaining,
    };
  return {
    ...state,
    phase: 'awaiting_user',
    attemptsRemaining: typeof attempts === 'number' ? attempts : state.attemptsRemaining,
  };
}

/** Whether a tick changed what the page shows: a countdown, or what may be done now. */
export function countdownsMoved(before: VerificationState, next: VerificationState): boolean {
  return (
    next.expiresInMs !== before.expiresInMs ||
    next.resendInMs !== before.resendInMs ||
    next.retryInMs !== before.retryInMs ||
    next.canResend !== before.canResend ||
    next.fallbackInMs !== before.fallbackInMs
  );
}

/**
 * The state a refused switch leaves: the current method goes on; `journey_limit_reached` empties
 * `switchMethods`, `fallback_not_available` moves `fallbackAvailableAt`.
 */
export function afterSwitchRefusal(
  state: VerificationState,
  refusal: VerificationClientError,
): VerificationState {
  return {
    ...state,
    switchMethods: refusal.code === 'journey_limit_reached' ? [] : state.switchMethods,
    fallbackAvailableAt: dateMs(refusal.problem?.fallback_available_at) ?? state.fallbackAvailableAt,
  };
}

/**
 * What a refused cancel changes of the (already canceled) state: verified meanwhile says so; a
 * verification unknown or already over leaves nothing to cancel (null: no change); else the refusal.
 */
export function afterCancelRefusal(
  state: VerificationState,
  refusal: VerificationClientError,
  verificationId: string,
): VerificationState | null {
  if (refusal.verificationStatus === 'verified')
    return { ...state, phase: 'verified', status: 'verified', verificationId };
  if (refusal.code === 'not_found' || refusal.code === 'not_pending') return null;
  return { ...state, error: refusal };
}

/** Whether the countdowns run: a verification under way, or a rate limit's wait. */
export function counting(state: VerificationState): boolean {
  return state.phase === 'awaiting_user' || state.phase === 'verifying' || waitUntil(state.error) !== null;
}

/** Ms past the pending verification's expiry (negative before it; -Infinity when none is pending or known). */
export function overExpiryMs(state: VerificationState, now: number): number {
  const pending = state.phase === 'awaiting_user' || state.phase === 'verifying';
  return pending && state.expiresAt !== null ? now - state.expiresAt : -Infinity;
}

/** The journey's current step, as a key (`autoFallback` switches once per step); null without a verification. */
export function stepKey(state: VerificationState): string | null {
  const { verificationId, method, methodsTried } = state;
  return verificationId ? `${verificationId}:${methodsTried.length}:${method ?? ''}` : null;
}
