import { releaseAll, takenInOrder, type ProtectionHold } from './protection-hold.js';
import type { RequestRateLimits } from './request-rate-limits.js';
import type { ResendCooldown } from './resend-cooldown.js';
import { limitsCallerOf, starterOf } from './start-callers.js';
import type { StartCandidate } from './verification-protection.types.js';

/** What a test number's start took (given back when it is not played) and when its caller may start it again. */
export interface TestAdmission {
  hold: ProtectionHold;
  /** The caller's resend cooldown's end for the number and method (null when the cooldown is off), as a real start's. */
  resendAvailableAt: Date | null;
}

/**
 * A test number's start or switch (`testNumbers`): the caller's own start limits and its resend
 * cooldown, under the keys a real number's start takes, so that its answer (429 `resend_cooldown`, or
 * 201 with `resend_available_at`) is a real number's; nothing of the number's own protection.
 */
export async function admitTestStart(
  cooldown: ResendCooldown,
  limits: RequestRateLimits,
  candidate: StartCandidate,
): Promise<TestAdmission> {
  const caller = limitsCallerOf(candidate);
  let resendAvailableAt: Date | null = null;
  const holds = await takenInOrder([
    cooldown
      .claim(candidate.phoneNumber, candidate.method, { caller, starter: starterOf(candidate) })
      .then((claim) => {
        resendAvailableAt = claim.availableAt;
        return claim.hold;
      }),
    limits.countStart(candidate.clientKey, candidate.phoneNumber, caller, false),
  ]);
  return { hold: { release: () => releaseAll(holds) }, resendAvailableAt };
}
