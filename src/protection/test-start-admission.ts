import { releaseAll, takenInOrder } from './protection-hold.js';
import type { RequestRateLimits } from './request-rate-limits.js';
import type { ResendCooldown } from './resend-cooldown.js';
import type { CoalescingClaim } from './start-coalescer.js';
import { limitsCallerOf, starterOf } from './start-callers.js';
import type { StartCandidate, StartedSession } from './verification-protection.types.js';

/**
 * What a test number's start or switch took, settled once its session is played (or not), and when its
 * caller may start it again.
 */
export interface TestAdmission {
  /** The caller's resend cooldown's end for the number and method (null when the cooldown is off), as a real start's. */
  resendAvailableAt: Date | null;
  /** The session was played: a coalesced start hands it back to identical starts until the cooldown's end. */
  played(session: StartedSession): Promise<void>;
  /** It was not: what the start took is given back, and identical starts waiting on it fail with `error`. */
  failed(error: unknown): Promise<void>;
}

/**
 * A test number's start or switch (`testNumbers`): the caller's own start limits and its resend
 * cooldown, under the keys a real number's start takes, so that its answer (429 `resend_cooldown`, or
 * 201 with `resend_available_at`) is a real number's; nothing of the number's own protection. A start
 * holding its coalescing `claim` settles it as a real start's permit does (see StartPermit), so an
 * identical start within the cooldown is handed the session back, as a real number's is.
 */
export async function admitTestStart(
  cooldown: ResendCooldown,
  limits: RequestRateLimits,
  candidate: StartCandidate,
  claim?: CoalescingClaim,
): Promise<TestAdmission> {
  const caller = limitsCallerOf(candidate);
  let resendAvailableAt: Date | null = null;
  const holds = await takenInOrder([
    cooldown
      .claim(candidate.phoneNumber, candidate.method, { caller, starter: starterOf(candidate) })
      .then((claimed) => {
        resendAvailableAt = claimed.availableAt;
        return claimed.hold;
      }),
    limits.countStart(candidate.clientKey, candidate.phoneNumber, caller, false),
  ]);
  return {
    resendAvailableAt,
    played: async (session) => {
      await claim?.started(session, resendAvailableAt);
    },
    failed: async (error) => {
      await releaseAll(holds);
      await claim?.failed(error);
    },
  };
}
