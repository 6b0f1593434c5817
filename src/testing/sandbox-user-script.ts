import type { SandboxScheduler } from './sandbox-scheduler.js';
import { TERMINAL, type SandboxSession } from './sandbox-session.js';
import type { SandboxTransitions } from './sandbox-transitions.js';

/**
 * Schedules what the session's simulated user does, on the sandbox clock: delivery (or the channel giving
 * up), and the completion the sandbox can act out itself (the reverse call, the push approval). Code
 * entry is left to a driver reading the plan. Each step re-checks the session: a control action or a
 * check may have moved it on meanwhile.
 */
export function actOutUser(
  session: SandboxSession,
  scheduler: SandboxScheduler,
  move: SandboxTransitions,
): void {
  const user = session.user!;
  const later = (afterMs: number | null, run: () => void): void => {
    if (afterMs === null) return;
    const at = session.createdAt + afterMs;
    if (at >= session.expiresAt) return; // the TTL comes first: the session expires
    scheduler.at(at, () => {
      if (!TERMINAL.has(session.status)) run();
    });
  };
  switch (session.method) {
    case 'reverse_flash_call':
      if (user.completes) later(user.completesAfterMs, () => move.verify(session)); // the caller ID matches
      return;
    case 'operator_id':
      if (!user.delivered) {
        later(user.deliveredAfterMs, () => {
          if (session.operatorState === 'push_pending') move.fallBackToSms(session);
        });
      } else if (user.completes) {
        later(user.completesAfterMs, () => {
          if (session.operatorState !== 'push_pending') return;
          session.operatorState = 'approved';
          move.verify(session);
        });
      }
      return;
    case 'msgr2_bot':
      if (user.delivered) {
        later(user.deliveredAfterMs, () => {
          if (session.status !== 'sent') return;
          session.sharedPhoneNumber = session.phoneNumber; // the user shares the very number
          move.sendBotCode(session);
        });
      }
      return;
    default:
      if (user.delivered) {
        later(user.deliveredAfterMs, () => {
          if (session.status === 'sent') move.deliverCode(session);
        });
      } else if (user.failsUndelivered) {
        later(user.deliveredAfterMs, () => move.fail(session));
      }
  }
}
