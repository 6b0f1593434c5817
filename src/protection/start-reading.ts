import { ProtectionRefusal } from '../core/refusal-reason.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import { settled } from '../core/settled.js';
import type { GradedAnswer, PumpingAssessment, PumpingDefence } from '../pumping/pumping-defence.js';
import type { RequestRateLimits } from './request-rate-limits.js';
import type { StartCandidate } from './verification-protection.types.js';
import type { WrongCodeBudget } from './wrong-code-budget.js';

/** What a start's verdict read before `beforeStart`, in one round trip (VerificationProtection), and its grading. */
export interface StartReading {
  pumping: PumpingAssessment | undefined;
  /** Throws the wrong-code budget's refusal, if any. */
  wrongCodes: () => void;
}

/**
 * Reads what a start's verdict needs, at once: the pumping defence's counts, the API's 429 back-off
 * (its refusal now) and the wrong-code budget (its refusal answers after the hook).
 */
export async function readStart(
  candidate: StartCandidate,
  wrongCodes: WrongCodeBudget,
  pumping: PumpingDefence,
  limits: RequestRateLimits,
): Promise<StartReading> {
  const budget = settled(wrongCodes.assertStartAllowed(candidate.phoneNumber, candidate.owner));
  const [assessment] = await Promise.all([pumping.assess(candidate), limits.assertUpstreamOpen()]);
  return { pumping: assessment, wrongCodes: await budget };
}

/**
 * A refusal by `held` of a start not charged on proof becomes 409 `method_held` while a method charged on
 * proof is offered (GradedAnswer); any other error is thrown as it is.
 */
export function graded(
  error: unknown,
  grade: GradedAnswer | undefined,
  held: ProtectionRefusalReason,
): unknown {
  if (!(error instanceof ProtectionRefusal) || error.reason !== held) return error;
  if (!grade || grade.proofCharged || grade.offered.length === 0) return error;
  return protectionRefusal(ProtectionRefusalReason.methodHeld, (error.retryAfterSeconds ?? 1) * 1000, {
    offered_methods: [...grade.offered],
    held,
  });
}
