import type { StartAssessmentFacts } from '../core/session-record.js';
import { methodTraits } from '../core/verification-method.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import type { LimitsOptions, StartAssessmentContext } from '../options/verification.options.js';
import type { KnownVerificationMethod } from '../api/api.types.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';

/** A reason that may reach a frontend, events and spans: a short code, never a number (no run of 7 digits). */
const REASON_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
const DIGIT_RUN = /\d{7}/;
const HOOK_FAILED_RETRY_MS = 5000;
/** Retry-After of a graded answer: another method may be started at once. */
const GRADED_RETRY_MS = 1000;

/** A refusal by the host's `assessStart` (`step_up` or `refuse`), with its answer for the history and span. */
export class AssessmentRefusal extends VerificationClientError {
  constructor(
    readonly assessment: { decision: 'step_up' | 'refuse'; reason: string },
    challenge: string | undefined,
  ) {
    super(
      assessment.decision === 'step_up' ? 'step_up_required' : 'start_refused',
      assessment.decision === 'step_up'
        ? 'This start needs a step-up first: pass the challenge and start again'
        : 'The start was refused',
      { reason: assessment.reason, ...(challenge === undefined ? {} : { challenge }) },
    );
  }
}

/** The host's answer, as the start goes on: what to record and whether a challenge was passed. */
export interface AssessmentOutcome {
  facts: StartAssessmentFacts;
  challengePassed: boolean;
}

/**
 * Runs the host's `assessStart(context)` (sync or async) for a start of `context.method` offered
 * `offered`. `allow` goes on; `grade` goes on for a method charged on proof and is 409 `method_held`
 * naming the offered ones otherwise (403 `start_refused` when none is offered); `step_up` is 403
 * `step_up_required`, `refuse` 403 `start_refused` (AssessmentRefusal). A hook that throws or answers
 * something else fails closed with 503 `service_unavailable` (`reason: assess_start_failed`): only the
 * error's name is logged, never its message (which may carry the number).
 */
export async function runAssessStart(
  hook: LimitsOptions['assessStart'],
  context: StartAssessmentContext,
  offered: readonly KnownVerificationMethod[],
  logger: ProtectionLog,
): Promise<AssessmentOutcome | undefined> {
  if (!hook) return undefined;
  let answer: unknown;
  try {
    answer = await hook(context);
  } catch (error) {
    logger.error('assessStart hook threw; start refused', {
      error: error instanceof Error ? error.name : typeof error,
    });
    throw protectionRefusal(ProtectionRefusalReason.assessStartFailed, HOOK_FAILED_RETRY_MS);
  }
  const decision =
    typeof answer === 'object' && answer !== null ? (answer as { decision?: unknown }).decision : undefined;
  const given = (answer as { reason?: unknown } | null)?.reason;
  const reason =
    typeof given === 'string' && REASON_PATTERN.test(given) && !DIGIT_RUN.test(given) ? given : undefined;
  switch (decision) {
    case 'allow': {
      const challengePassed = (answer as { challengePassed?: unknown }).challengePassed === true;
      return {
        facts: {
          decision: 'allow',
          ...(reason === undefined ? {} : { reason }),
          ...(challengePassed ? { challengePassed: true as const } : {}),
        },
        challengePassed,
      };
    }
    case 'grade': {
      const why = reason ?? 'unspecified';
      if (methodTraits(context.method).chargedOnProof)
        return { facts: { decision: 'grade', reason: why }, challengePassed: false };
      const onProof = offered.filter((method) => methodTraits(method).chargedOnProof);
      if (onProof.length === 0) throw new AssessmentRefusal({ decision: 'refuse', reason: why }, undefined);
      throw protectionRefusal(ProtectionRefusalReason.methodHeld, GRADED_RETRY_MS, {
        offered_methods: onProof,
        held: 'assessment',
        assessment_reason: why,
      });
    }
    case 'step_up': {
      const challenge = (answer as { challenge?: unknown }).challenge;
      throw new AssessmentRefusal(
        { decision: 'step_up', reason: reason ?? 'unspecified' },
        typeof challenge === 'string' && REASON_PATTERN.test(challenge) ? challenge : undefined,
      );
    }
    case 'refuse':
      throw new AssessmentRefusal({ decision: 'refuse', reason: reason ?? 'unspecified' }, undefined);
    default:
      logger.error('assessStart hook answered no decision of allow, grade, step_up or refuse; start refused');
      throw protectionRefusal(ProtectionRefusalReason.assessStartFailed, HOOK_FAILED_RETRY_MS);
  }
}
