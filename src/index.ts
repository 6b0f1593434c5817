/*
 * The package's public surface: what a host's code uses, named one by one and grouped by audience.
 * etc/nestjs-phone-verification.api.md is its report; `npm run lint` fails when the two differ.
 */

/* Module & registration: importing the module, statically or from a factory. */
export { VerificationModule, type VerificationModuleAsyncOptions } from './module/verification.module.js';
export type {
  VerificationModuleAsyncBase,
  VerificationModuleRootOptions,
  VerificationOptionsFactory,
} from './module/verification.module-definition.js';
export { InjectVerificationOptions } from './module/inject-verification-options.decorator.js';

/* The service and events a host's code uses: starting, checking and following from its own code. */
export { VerificationService } from './verification/verification.service.js';
export { OnVerificationEvent } from './module/on-verification-event.decorator.js';
export {
  PhoneChangeEventName,
  VerificationEventName,
  VerificationOpsEventName,
} from './core/verification-events.js';

/* Errors a host renders or catches: every one is an instance of PhoneVerificationError. */
export { PhoneVerificationError } from './core/phone-verification.error.js';
export { ClientErrorCode, VerificationClientError, VerificationError } from './core/verification.errors.js';
export { ProtectionRefusalReason } from './core/refusal-reason.js';
export { VerificationProblemFilter } from './http/verification-problem.filter.js';
export { VerificationListenerError } from './sessions/verification.tracker.js';
export { VerificationOptionsError } from './options/verification.options.js';
export { VerificationStoreUnavailableError } from './store/store-unavailable.error.js';

/* Stores: the built-in two, and the interface (and injection token) a host's own store implements. */
export {
  VerificationStore,
  type StoreMessageListener,
  type StoreWriteOptions,
} from './store/verification-store.interface.js';
export type { StoreBatchResults, StoreOperation, StoreOperationResults } from './store/store-batch.js';
export { MemoryStore, type MemoryStoreOptions } from './store/memory.store.js';
export { RedisStore, type RedisStoreOptions } from './store/redis.store.js';
export type { RedisDriverName } from './store/open-redis-client.js';
export type {
  IoRedisClientLike,
  NodeRedisClientLike,
  NodeRedisClusterLike,
  RedisClientLike,
} from './store/redis-command-runner.js';

/* Operations: account (balance, prices, usage), the balance watch, health, metrics, the reconciler. */
export { VerificationAccountService } from './account/verification-account.service.js';
export type { MethodFigures, MethodStatsQuery, MethodStatsReport } from './account/method-figures.js';
export type { MethodHealthReport } from './account/method-health.service.js';
export type { HealthState, Rates as MethodHealthRates } from './account/method-health.js';
export { VerificationBalanceWatch, type BalanceReading } from './account/balance-watch.service.js';
export {
  VerificationHealthIndicator,
  type VerificationHealthOptions,
  type VerificationHealthReason,
  type VerificationHealthResult,
  type VerificationHealthStatus,
} from './account/verification-health.indicator.js';
export { DEFAULT_METRICS_PREFIX } from './observability/verification-metrics.js';
export { VerificationReconciler } from './sessions/verification.reconciler.js';

/*
 * Extension points: controller bases for custom routes, with what a subclass's constructor takes (the
 * stream hub, the webhook receiver: made by the module, injected) and what its handlers take and answer;
 * the typed API client and its errors for direct use.
 */
export { VerificationControllerBase } from './http/verification.controller.js';
export { StatusStreamHub } from './http/status-stream.hub.js';
export { StartVerificationDto } from './http/start-verification.dto.js';
export { CheckVerificationDto } from './http/check-verification.dto.js';
export { SwitchVerificationDto } from './http/switch-verification.dto.js';
export { CancelVerificationDto } from './http/cancel-verification.dto.js';
export {
  CancelVerificationResponse,
  CheckVerificationResponse,
  StartVerificationResponse,
  VerificationMethodItem,
  VerificationMethodsResponse,
  VerificationStatusResponse,
} from './http/verification.responses.js';
export {
  WebhookControllerBase,
  type WebhookAcknowledgement,
  type WebhookRequest,
} from './webhooks/webhook.controller.js';
export { WebhookReceiver, type WebhookResult } from './webhooks/webhook-receiver.js';
export {
  StandardWebhooksVerifier,
  type SignatureRejection,
  type StandardWebhooksVerifierOptions,
  type WebhookHeaders,
} from './webhooks/standard-webhooks.verifier.js';
export { VerificationApiClient } from './api/verification-api.client.js';
export {
  VerificationApiError,
  VerificationApiUnavailableError,
  type UnavailableReason,
} from './api/verification-api.error.js';
// The one wire type a host sees: the API's problem document, as `VerificationApiError.problem`.
export type { ProblemWire } from './api/api.wire.js';
export { isKnownInitiateResult } from './api/method-names.js';
export { VERIFICATION_METHODS, VERIFICATION_STATUSES } from './api/api.types.js';

/* Types of options, views and events. */
export type {
  ApiOptions,
  BalanceWatchOptions,
  BeforeStartResult,
  HostRequest,
  LimitsOptions,
  MetricsOptions,
  OrchestrationFallbackOptions,
  OrchestrationOptions,
  OwnerAnswer,
  PhoneOptions,
  PumpingOptions,
  PumpingSafeList,
  RateLimit,
  ReconcileOptions,
  ResolvedLimits,
  ResolvedOrchestration,
  ResolvedOrchestrationFallback,
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
export { DEFAULT_METHODS, DEFAULT_SPEND_CAP } from './options/verification.options.js';
export type { WebhookRouteOptions } from './options/verification.options.js';
/* Reviewer and demo numbers (`testNumbers`). */
export type { ResolvedTestNumbers, TestNumber, TestNumbersOptions } from './options/verification.options.js';
export { isTestSession, type TestNumberOutcome } from './core/test-session.js';
/* Several accounts in one app: named registrations. */
export {
  getVerificationToken,
  InjectPhoneChange,
  InjectVerificationAccountService,
  InjectVerificationErasure,
  InjectVerificationHistory,
  InjectVerificationLedger,
  InjectVerificationService,
  InjectVerificationStore,
} from './module/verification-registration.js';
/* Per-number and per-owner history for support. */
export type { HistoryOptions } from './options/verification.options.js';
export { VerificationHistory } from './history/verification-history.service.js';
export { VerificationErasure } from './verification/verification-erasure.js';
export { DataKeys } from './core/data-keys.js';
export type { ErasureReport, ErasureRequest } from './verification/verification-erasure.js';
export type {
  VerificationHistoryEntry,
  VerificationHistoryKind,
  VerificationHistoryQuery,
} from './history/verification-history.types.js';
/* The ledger: expected charges per day, method and operator prefix, reconciled with the API. */
export type { LedgerOptions } from './options/verification.options.js';
export { VerificationLedger } from './ledger/verification-ledger.service.js';
export type {
  LedgerCount,
  LedgerDayReport,
  LedgerFigures,
  LedgerRow,
  LedgerUsage,
} from './ledger/ledger-report.js';
export type { LedgerDimension, LedgerRowKey } from './ledger/ledger-row.js';
/* The ops page a host mounts behind its own guard. */
export { VerificationOpsPage, type OpsPageQuery } from './ops/verification-ops-page.service.js';
export {
  createVerificationOpsController,
  OPS_PAGE_CSP,
  type OpsControllerOptions,
} from './ops/verification-ops.controller.js';
export type { OpsPageData } from './ops/ops-page.view.js';
export type { OpsLanguage } from './ops/ops-page.texts.js';
/* "Requires a verified phone" on the host's own routes. */
export type { VerifiedPhoneOptions } from './options/verification.options.js';
export { VerifiedPhoneGuard, VERIFIED_WITHIN_MS } from './guard/verified-phone.guard.js';
export {
  RequireVerifiedPhone,
  VerifiedPhone,
  type RequireVerifiedPhoneOptions,
} from './guard/verified-phone.decorators.js';
export { verifiedPhoneOf, type VerifiedPhoneDetails } from './guard/verified-phone.request.js';
export {
  VerifiedPhoneClaims,
  type VerifiedPhoneClaim,
  type VerifiedPhoneFacts,
} from './guard/verified-phone-claims.js';
/* Issue 48 (lane 48a): a purpose per verification, the risk hook, the change of phone. */
export { BUILT_IN_PURPOSES, PURPOSE_PRESETS } from './options/purposes.options.js';
export type {
  BuiltInPurpose,
  PurposePolicy,
  PurposesOptions,
  ResolvedPurposePolicy,
  ResolvedPurposes,
} from './options/purposes.options.js';
export { REQUIRED_PURPOSE } from './guard/verified-phone.guard.js';
export type { PhoneChangeOptions } from './options/verification.options.js';
export {
  PhoneChange,
  type PhoneChangeFacts,
  type PhoneChangeRequest,
  type PhoneChangeResult,
} from './guard/phone-change.js';
export type { StartAssessment, StartAssessmentContext } from './options/limits.options.js';
export type { StartAssessmentFacts } from './core/session-record.js';
export type {
  ApiOperation,
  ApiRequestInfo,
  ApiTransport,
  VerificationApiClientOptions,
} from './api/api-client.options.js';
export type {
  CancelInput,
  CancelView,
  CheckInput,
  CheckView,
  MethodView,
  StartInput,
  StartView,
  StatusView,
  SwitchInput,
} from './verification/verification.views.js';
export type { DeviceHint } from './core/journey.js';
export type { CodeEntry } from './core/verification-method.js';
export type {
  BalanceEvent,
  FraudSuspectedEvent,
  LedgerDriftEvent,
  FallbackMomentEvent,
  PhoneChangedEvent,
  MethodHealthEvent,
  SpendCapReachedEvent,
  VerificationEvent,
  VerificationEventShortName,
  VerificationEventSource,
  VerificationEventType,
} from './core/verification-events.js';
export type {
  Balance,
  CheckRequest,
  CheckResult,
  CodeMethodInitiated,
  InitiateRequest,
  InitiateResultBase,
  InitiateResult,
  KnownInitiateResult,
  KnownVerificationMethod,
  KnownVerificationStatus,
  MethodPrice,
  Money,
  Msgr2BotInitiated,
  OperatorIdInitiated,
  Prices,
  ReverseFlashCallInitiated,
  UnknownMethodInitiated,
  UsageDay,
  UsageQuery,
  UsageSummary,
  VerificationMethod,
  VerificationSession,
  VerificationStatus,
} from './api/api.types.js';
