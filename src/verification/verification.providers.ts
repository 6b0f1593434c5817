import type { Provider } from '@nestjs/common';
import { CheckFlow } from './check.flow.js';
import { FlowOutcomes } from './flow-outcomes.js';
import { InDoubtStarts } from './in-doubt-starts.js';
import { JourneyHandles } from './journey-handles.js';
import { JourneyState } from './journey-state.js';
import { OrchestrationPolicy } from './orchestration.policy.js';
import { PaidStart } from './paid-start.js';
import { StartFlow } from './start.flow.js';
import { StatusFlow } from './status.flow.js';
import { StatusWatch } from './status-watch.js';
import { SwitchFlow } from './switch.flow.js';
import { VerificationService } from './verification.service.js';

/**
 * The verification layer's providers, one per registration: the flows (each runs one operation, top
 * to bottom), the parts they share, the status streams' watch, and the facade hosts inject
 * (VerificationService).
 */
export const VERIFICATION_PROVIDERS: Provider[] = [
  OrchestrationPolicy,
  JourneyState,
  JourneyHandles,
  InDoubtStarts,
  PaidStart,
  FlowOutcomes,
  StartFlow,
  SwitchFlow,
  CheckFlow,
  StatusFlow,
  StatusWatch,
  VerificationService,
];
