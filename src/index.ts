/*
 * The package's public surface, named one by one and grouped by who uses it, so that every change
 * of it shows in a diff of this file.
 */

/* ---------------------------------------------------------------- registering the module */
export { VerificationModule, type VerificationModuleAsyncOptions } from './module/verification.module.js';
export {
  VERIFICATION_MODULE_OPTIONS,
  type VerificationOptionsFactory,
} from './module/verification.module-definition.js';
export type {
  ApiOptions,
  BalanceWatchOptions,
  BeforeStartResult,
  HostRequest,
  LimitsOptions,
  MetricsOptions,
  PhoneOptions,
  PumpingOptions,
  PumpingSafeList,
  RateLimit,
  ReconcileOptions,
  ResolvedLimits,
  ResolvedPumping,
  ResolvedRoutes,
  ResolvedVerificationOptions,
  RoutesOptions,
  SpendCapOptions,
  StartContext,
  StatusCacheOptions,
  StatusStreamOptions,
  StoreOption,
  VerificationModuleOptions,
  WebhookOptions,
  WebhookVerifier,
} from './options/verification.options.js';
export {
  DEFAULT_METHODS,
  DEFAULT_SPEND_CAP,
  optionWarnings,
  resolveVerificationOptions,
  VerificationOptionsError,
} from './options/verification.options.js';

/* ---------------------------------------------------------------- a host's own code: service, events, errors */
export { VerificationService } from './verification/verification.service.js';
export type {
  CheckInput,
  CheckView,
  MethodView,
  StartInput,
  StartView,
  StatusView,
} from './verification/verification.views.js';
export { OnVerificationEvent } from './module/on-verification-event.decorator.js';
export {
  VerificationEventName,
  VerificationOpsEventName,
  type BalanceEvent,
  type FraudSuspectedEvent,
  type SpendCapReachedEvent,
  type VerificationEvent,
  type VerificationEventShortName,
  type VerificationEventSource,
  type VerificationEventType,
} from './core/verification-events.js';
export { ClientErrorCode, VerificationClientError, VerificationError } from './core/verification.errors.js';
export { VerificationProblemFilter } from './http/verification-problem.filter.js';
export { VerificationListenerError } from './sessions/verification.tracker.js';
export { ProtectionRefusalReason } from './protection/protection-refusals.js';

/* ---------------------------------------------------------------- the API client */
export { VerificationApiClient } from './api/verification-api.client.js';
export {
  API_CLIENT_DEFAULTS,
  VERIFICATION_API_CLIENT_OPTIONS,
  type ApiOperation,
  type ApiRequestInfo,
  type ApiTransport,
  type VerificationApiClientOptions,
} from './api/api-client.options.js';
export {
  VerificationApiError,
  VerificationApiUnavailableError,
  type UnavailableReason,
} from './api/verification-api.error.js';
export { isKnownInitiateResult, isKnownMethod, normalizeMethod, toWireMethod } from './api/method-names.js';
export {
  TERMINAL_STATUSES,
  VERIFICATION_METHODS,
  VERIFICATION_STATUSES,
  type Balance,
  type CheckRequest,
  type CheckResult,
  type CodeMethodInitiated,
  type InitiateRequest,
  type InitiateResult,
  type KnownInitiateResult,
  type KnownVerificationMethod,
  type KnownVerificationStatus,
  type MethodPrice,
  type Money,
  type Msgr2BotInitiated,
  type OperatorIdInitiated,
  type Prices,
  type ReverseFlashCallInitiated,
  type UnknownMethodInitiated,
  type UsageDay,
  type UsageQuery,
  type UsageSummary,
  type VerificationMethod,
  type VerificationSession,
  type VerificationStatus,
} from './api/api.types.js';
export type {
  BalanceWire,
  CheckRequestWire,
  CheckResponseWire,
  InitiateRequestWire,
  InitiateResponseWire,
  MoneyWire,
  PriceEntryWire,
  PricesWire,
  ProblemWire,
  UsageDayWire,
  UsageSummaryWire,
  VerificationSessionWire,
} from './api/api.wire.js';

/* ---------------------------------------------------------------- stores */
export {
  VerificationStore,
  type StoreMessageListener,
  type StoreWriteOptions,
} from './store/verification-store.interface.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.store.js';
export { RedisStore, type RedisStoreOptions } from './store/redis.store.js';
export { VerificationStoreUnavailableError } from './store/store-unavailable.error.js';

/* ---------------------------------------------------------------- operating it: account, health, metrics */
export { VerificationAccountService } from './account/verification-account.service.js';
export { VerificationBalanceWatch, type BalanceReading } from './account/balance-watch.service.js';
export {
  VerificationHealthIndicator,
  type VerificationHealthOptions,
  type VerificationHealthReason,
  type VerificationHealthResult,
  type VerificationHealthStatus,
} from './operations/verification-health.indicator.js';
export { DEFAULT_METRICS_PREFIX } from './observability/verification-metrics.js';
export type { RefusalReason } from './core/refusal-reason.js';
export { VerificationReconciler } from './sessions/verification.reconciler.js';

/* ---------------------------------------------------------------- extending the routes and protection */
export { VerificationControllerBase } from './http/verification.controller.js';
export {
  StandardWebhooksVerifier,
  type StandardWebhooksVerifierOptions,
  type WebhookHeaders,
} from './webhooks/standard-webhooks.verifier.js';
export { WebhookControllerBase, type WebhookAcknowledgement } from './webhooks/webhook.controller.js';
export type { WebhookResult } from './webhooks/webhook-receiver.js';
export type { WebhookRouteOptions } from './options/verification.options.js';
export { VerificationProtection } from './protection/verification-protection.service.js';
export type {
  ProtectedStart,
  StartAttempt,
  StartedSession,
} from './protection/verification-protection.types.js';
