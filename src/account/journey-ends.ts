import { cutOffBySwitch } from '../core/fallback-moment.js';
import type { DeviceHint, JourneyStep } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import type { VerificationMethod } from '../core/verification-method.js';
import {
  BUCKET_FIELD,
  countsOf,
  LEFT_FIELD,
  RESCUED_FIELD,
  UNPROVEN_FIELD,
  type Counts,
  type MethodTransition,
} from './method-figures.js';

/*
 * A session's end in the method figures: what it became, counted once (FigureEvidence.claimEnd), at
 * its own end or, for a step its journey switched away from, when a later step verifies the journey.
 */

/** A session's end: what it became. */
export function isEnd(transition: MethodTransition): boolean {
  return transition === 'verified' || transition === 'expired' || transition === 'failed';
}

/** `counts` less the session's end (`drop`: counted already), keeping what it charged. */
export function withoutEnd(counts: Counts, drop: boolean): Counts {
  if (!drop) return counts;
  const kept = (field: string) => !isEnd(field as MethodTransition) && !field.startsWith(BUCKET_FIELD);
  const { timeToVerifyMs: _, ...rest } = counts;
  return {
    ...rest,
    transitions: counts.transitions.filter((transition) => !isEnd(transition)),
    adds: counts.adds.filter(([field]) => kept(field)),
  };
}

/**
 * What an unverified end adds when another step verified its journey (FigureEvidence.verifiedStep).
 * Started `later`, that step rescued a real user this method failed (RESCUED_FIELD, the health's
 * evidence): in its moment figures `left` when the switch cut it off (else a method tried after another
 * would look as if users gave up), ended otherwise. Started `earlier` (a call its user placed late), it
 * verified the user while this one waited: no outcome of this method, out of its ranking and its moment.
 */
export function endInVerifiedJourney(
  counts: Counts,
  method: VerificationMethod,
  verifiedBy: 'earlier' | 'later',
): void {
  const left: [string, number][] = [
    ...counts.adds.filter(([field]) => field !== 'expired' && field !== 'failed'),
    [LEFT_FIELD, 1],
  ];
  if (verifiedBy === 'earlier') {
    counts.adds.push([UNPROVEN_FIELD, 1]);
    counts.momentAdds = left;
    return;
  }
  counts.adds.push([RESCUED_FIELD, 1]);
  if (counts.momentGroup !== undefined && cutOffBySwitch(method)) counts.momentAdds = left;
}

/**
 * What ending `step` (of `verified`'s journey, started before it) adds when `verified` verified the
 * journey: a real user the step's method failed (RESCUED_FIELD), expired, in its own cells, known
 * now rather than at its expiry; in its moment figures `left` when a switch cut it off.
 */
export function earlierEndCounts(
  verified: SessionRecord,
  step: JourneyStep,
  device: DeviceHint | null,
  now: number,
): Counts {
  const record: SessionRecord = {
    ...verified,
    requestId: step.requestId,
    method: step.method,
    createdAt: step.startedAt,
    status: 'expired',
    verifiedAt: null,
    cost: undefined,
  };
  const counts = countsOf(record, ['expired'], now, device);
  counts.adds.push([RESCUED_FIELD, 1]);
  if (counts.momentGroup !== undefined && cutOffBySwitch(step.method)) counts.momentAdds = [[LEFT_FIELD, 1]];
  return counts;
}
