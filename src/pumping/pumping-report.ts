import { maskPhoneNumber } from '../core/phone-mask.js';
import { VerificationOpsEventName, type FraudSuspectedEvent } from '../core/verification-events.js';
import type { ProtectionLog } from '../observability/protection-log.js';
import type { VerificationMetrics } from '../observability/verification-metrics.js';
import type { SubjectCounts } from './pumping-counts.js';
import type { NumberPlace, PumpingAttempt } from './pumping-subjects.js';
import type { Held } from './pumping-verdict.js';

/** Where the defence reports: the module's log, metrics and ops event (VerificationTelemetry). */
export interface PumpingReporting {
  logger: ProtectionLog;
  metrics: Pick<VerificationMetrics, 'fraudSuspected' | 'pumpingRefusal'>;
  announce(event: FraudSuspectedEvent): void;
}

/** A new hold as reported: what held which start, and until when. */
export interface HoldReport {
  reason: FraudSuspectedEvent['reason'];
  mode: FraudSuspectedEvent['mode'];
  attempt: PumpingAttempt;
  place: NumberPlace;
  underAttack: boolean;
  /** The held subject; undefined for the spend cap's reserve (the country's). */
  held: Held | undefined;
  /** The held subject's counts, else the country's (a slow drip's are reported over the day). */
  counts: SubjectCounts;
  holdMs: number;
  until: number;
}

/** Reports a new hold once: a warning in the log, the metric, and `verification.fraud_suspected`. */
export function reportHold(report: PumpingReporting, hold: HoldReport): void {
  const { held, attempt, place } = hold;
  // A slow drip is seen over the day: its counts are the day's.
  const counts = held?.rule === 'slow_drip' && hold.counts.day ? hold.counts.day : hold.counts;
  const event: FraudSuspectedEvent = {
    event: VerificationOpsEventName.fraudSuspected,
    reason: hold.reason,
    mode: hold.mode,
    range: place.range,
    prefix: place.prefix,
    country: place.country,
    subject: held ? held.kind : 'country',
    rule: held ? held.rule : 'spend_cap_reserve',
    ...(attempt.owner === undefined ? {} : { owner: attempt.owner }),
    phoneNumberMasked: maskPhoneNumber(attempt.phoneNumber),
    countryUnderAttack: hold.underAttack,
    counts: { starts: Math.round(counts.starts), verified: Math.round(counts.verified) },
    holdMs: hold.holdMs,
    heldUntil: new Date(hold.until),
  };
  report.logger.warn('pumping defence: starts that do not complete; hold started', {
    reason: event.reason,
    mode: event.mode,
    subject: event.subject,
    rule: event.rule,
    range: event.range,
    prefix: event.prefix,
    country: event.country,
    starts: event.counts.starts,
    verified: event.counts.verified,
    hold_ms: hold.holdMs,
  });
  report.metrics.fraudSuspected(event.reason, event.mode);
  report.announce(event);
}
