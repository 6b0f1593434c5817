import type { FactoryProvider, Provider } from '@nestjs/common';
import { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import { MethodStats } from '../account/method-stats.service.js';
import { PriceBook } from '../account/price-book.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationProtection } from '../protection/verification-protection.service.js';
import { SessionRecordRepository } from '../sessions/session-record.repository.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { VerificationTracker } from '../sessions/verification.tracker.js';
import { CheckFlow } from './check.flow.js';
import { FlowOutcomes } from './flow-outcomes.js';
import { JourneyState } from './journey-state.js';
import { OrchestrationPolicy } from './orchestration.policy.js';
import { PaidStart } from './paid-start.js';
import { StartFlow } from './start.flow.js';
import { StatusFlow } from './status.flow.js';
import { SwitchFlow } from './switch.flow.js';
import { VerificationService } from './verification.service.js';

/** What the flows are made of: the factory's `inject`, in the order `verificationService` takes them. */
const FLOW_PARTS = [
  RESOLVED_VERIFICATION_OPTIONS,
  VerificationProtection,
  PaidStart,
  PriceBook,
  OrchestrationPolicy,
  JourneyState,
  SessionRecordRepository,
  VerificationApiClient,
  SessionRefresher,
  VerificationTracker,
  VerificationBalanceWatch,
  VerificationTelemetry,
  VerificationHistory,
  MethodStats,
] as const;

/** The instance each token injects (the options token: the resolved options). */
type Injected<Tokens extends readonly unknown[]> = {
  -readonly [K in keyof Tokens]: Tokens[K] extends abstract new (...args: never[]) => infer T
    ? T
    : ResolvedVerificationOptions;
};

/** What `verificationService` takes, typed from FLOW_PARTS: a part named out of order fails to compile. */
type FlowParts = Injected<typeof FLOW_PARTS>;

/**
 * The composition root of the flows. The flows and FlowOutcomes are used by VerificationService
 * alone (StatusFlow by SwitchFlow too), so they are plain objects made here, once per registration,
 * as the webhook receiver makes its notices: each takes only the parts it uses (at most 8), and no
 * class sees the whole of FlowParts.
 */
function verificationService(...parts: FlowParts): VerificationService {
  const [
    options,
    protection,
    paid,
    prices,
    policy,
    journeys,
    records,
    api,
    refresher,
    tracker,
    balance,
    telemetry,
    history,
    stats,
  ] = parts;
  const outcomes = new FlowOutcomes(telemetry, history, stats);
  const status = new StatusFlow(options, journeys, refresher, records, prices, outcomes);
  return new VerificationService(
    new StartFlow(options, protection, paid, prices, policy, journeys, records, outcomes),
    new SwitchFlow(options, protection, paid, journeys, records, status, outcomes),
    new CheckFlow(options, protection, journeys, api, refresher, tracker, balance, outcomes),
    status,
  );
}

const VERIFICATION_SERVICE: FactoryProvider<VerificationService> = {
  provide: VerificationService,
  useFactory: verificationService,
  inject: [...FLOW_PARTS],
};

/** The verification layer's providers: the parts several flows (or other layers) share, and the facade. */
export const VERIFICATION_PROVIDERS: Provider[] = [
  OrchestrationPolicy,
  JourneyState,
  PaidStart,
  VERIFICATION_SERVICE,
];
