import type { VerificationClientError } from '../client/index.js';
import { duration, errorKey, type TextKey } from './messages.js';

/** The element's texts in its language, `{name}`s filled in. */
export interface Translator {
  t(key: TextKey, values?: Record<string, string | number>): string;
  /** "3 attempts left", in the language's plural form. */
  attempts(n: number): string;
}

/** The message of a refusal in the element's language (`waitMs`: how long until a retry may go). */
export function refusalText(error: VerificationClientError, waitMs: number | null, say: Translator): string {
  const p = error.problem;
  switch (error.code) {
    case 'invalid_code':
      return typeof p.attempts_remaining === 'number'
        ? say.t('e_invalid_code_left', { attempts: say.attempts(p.attempts_remaining) })
        : say.t('e_invalid_code');
    case 'not_pending':
      return p.verification_status && ['expired', 'verified', 'failed'].includes(p.verification_status)
        ? say.t(`e_not_pending_${p.verification_status}` as TextKey)
        : say.t('e_not_pending');
    case 'rate_limit_exceeded':
      if (waitMs && p.reason === 'resend_cooldown')
        return say.t('e_resend_cooldown', { t: duration(waitMs) });
      return waitMs ? say.t('e_rate_limit_wait', { t: duration(waitMs) }) : say.t('e_rate_limit_exceeded');
    case 'phone_not_allowed':
      if (p.reason === 'number_type') return say.t('e_phone_type');
      break;
    case 'validation_error':
      if (p.errors?.some((e) => e.field === 'phone_number')) return say.t('e_phone');
  }
  const key = errorKey(error.code);
  return say.t(key, { code: error.code });
}

/**
 * The line under the code field ("2 attempts left"): empty while the refusal shown already says how
 * many are left (a wrong code's message), so the count is read once.
 */
export function attemptsLine(
  attemptsRemaining: number | null,
  error: VerificationClientError | null,
  say: Translator,
): string {
  if (attemptsRemaining === null) return '';
  if (error?.code === 'invalid_code' && typeof error.problem.attempts_remaining === 'number') return '';
  return say.attempts(attemptsRemaining);
}
