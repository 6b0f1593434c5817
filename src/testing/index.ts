export { VerificationSandbox, DEMO_API_KEY } from './sandbox.js';
export type {
  SandboxOptions,
  SandboxAccountInput,
  SandboxAccountCredentials,
  SandboxMethod,
  OperatorOutcome,
} from './sandbox.options.js';
export { SANDBOX_METHODS } from './sandbox.options.js';
export type { SandboxSessionView, SessionStatus, OperatorState } from './sandbox-session.js';
export type { SandboxAccountView } from './sandbox-accounts.js';
export type { ControlActionResult } from './sandbox-state.js';
export type { WebhookDelivery, WebhookEvent } from './sandbox-webhooks.js';
export type { SandboxFaultInput, RouteFaultInput, WebhookFaultInput, ApiRoute } from './sandbox-faults.js';
export type { SandboxUsageSummary } from './sandbox-usage.js';
export type { WireMoney } from './sandbox-money.js';
export { SandboxControlClient, SandboxControlError } from './sandbox-control.client.js';
/* The root of the package's server-side errors, SandboxControlError's too (the same class as the main entry's). */
export { PhoneVerificationError } from '../core/phone-verification.error.js';
export type { SandboxControlClientOptions, SandboxControlFetch } from './sandbox-control.client.js';
export type {
  SandboxControlAccount,
  SandboxControlActionResult,
  SandboxControlClock,
  SandboxControlFault,
  SandboxControlRouteFault,
  SandboxControlSession,
  SandboxControlUserDevice,
  SandboxControlUserPlan,
  SandboxControlWebhookDelivery,
  SandboxControlWebhookFaults,
} from './sandbox-control.types.js';
export type { RouteFaultKind } from './sandbox-faults.js';
export { SANDBOX_POPULATION_REALISTIC } from './sandbox-population.realistic.js';
export { SANDBOX_DEVICES } from './sandbox-population.js';
export type {
  SandboxDevice,
  SandboxMethodBehaviour,
  SandboxPopulation,
  SandboxUndelivered,
  SandboxUserBehaviour,
  SandboxUserTime,
} from './sandbox-population.js';
export type { SandboxCompletedBy, SandboxUserPlanView } from './sandbox-users.js';
