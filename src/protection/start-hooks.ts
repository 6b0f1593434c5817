import type { ProtectionLog } from '../observability/protection-log.js';
import type { ResolvedLimits, StartContext } from '../options/verification.options.js';
import { runAssessStart, type AssessmentOutcome } from './assess-start-hook.js';
import { runBeforeStart } from './before-start-hook.js';
import type { StartCandidate } from './verification-protection.types.js';

/** What the host's hooks answered a start that goes on. */
export interface HooksAnswer {
  /** `assessStart`'s answer, for the session's record (none: no hook). */
  assessment: AssessmentOutcome | undefined;
  /** The caller passed a challenge (either hook said so): a pumping hold is lifted for this start. */
  challengePassed: boolean;
}

/**
 * The host's hooks of a start, in turn: its risk answer first (`assessStart`: it may grade or refuse
 * before anything is counted), then its check (`beforeStart`). Each throws its refusal.
 */
export async function runStartHooks(
  limits: Pick<ResolvedLimits, 'assessStart' | 'beforeStart'>,
  candidate: StartCandidate,
  suspected: StartContext['suspected'] | undefined,
  logger: ProtectionLog,
): Promise<HooksAnswer> {
  const context: StartContext = {
    phoneNumber: candidate.phoneNumber,
    method: candidate.method,
    ip: candidate.ip,
    owner: candidate.owner,
    request: candidate.request,
    ...(suspected ? { suspected } : {}),
    ...(candidate.switchedFrom ? { switchedFrom: candidate.switchedFrom } : {}),
  };
  const assessment = await runAssessStart(
    limits.assessStart,
    { ...context, ...(candidate.purpose === undefined ? {} : { purpose: candidate.purpose }) },
    candidate.offered ?? [],
    logger,
  );
  const passed = await runBeforeStart(limits.beforeStart, context, logger);
  return { assessment, challengePassed: passed || assessment?.challengePassed === true };
}
