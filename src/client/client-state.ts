import type { VerificationClientError } from './errors.js';
import type { VerificationState } from './types.js';

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
