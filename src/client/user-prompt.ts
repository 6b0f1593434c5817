import { isSafeLink, isSafeNumberToCall } from './safe-links.js';
import type { StatusAnswer, UserPrompt, VerificationPhase } from './types.js';

const TERMINAL: readonly string[] = ['verified', 'failed', 'expired', 'canceled'];

export function isTerminal(status: string): boolean {
  return TERMINAL.includes(status);
}

/** The phase and the user's task an answer of start or status means. */
export function phaseOf(
  answer: StatusAnswer,
  codeAccepted: boolean,
): { phase: VerificationPhase; prompt: UserPrompt | null } {
  if (isTerminal(answer.status)) return { phase: answer.status as VerificationPhase, prompt: null };
  // operator_id: the code was accepted and the operator's verdict follows.
  if (codeAccepted) return { phase: 'verifying', prompt: null };
  return { phase: 'awaiting_user', prompt: promptOf(answer) };
}

function promptOf(answer: StatusAnswer): UserPrompt {
  if (answer.awaiting_code) {
    const length = answer.code_length ?? null;
    return {
      kind: 'code',
      length,
      minLength: answer.code_length_min ?? length ?? 4,
      maxLength: answer.code_length_max ?? length ?? 8,
    };
  }
  // What the server hands over to open or call is checked again here: a link or number that is not
  // one (a `javascript:` link) never becomes an href or a QR code; the user waits as for a push.
  if (isSafeNumberToCall(answer.number_to_call))
    return { kind: 'call', numberToCall: answer.number_to_call, telHref: `tel:${answer.number_to_call}` };
  if (isSafeLink(answer.deep_link)) return { kind: 'link', deepLink: answer.deep_link };
  return { kind: 'push' };
}
