export { VerificationModule, type VerificationModuleAsyncOptions } from './verification.module.js';
export {
  VERIFICATION_MODULE_OPTIONS,
  type VerificationOptionsFactory,
} from './verification.module-definition.js';
export * from './verification.options.js';
export { ClientErrorCode, VerificationClientError, VerificationError } from './verification.errors.js';
export { VerificationProblemFilter } from './verification-problem.filter.js';
export * from './api/index.js';
export * from './events/verification-events.js';
export { OnVerificationEvent } from './events/on-verification-event.decorator.js';
export { VerificationService } from './sessions/verification.service.js';
export type * from './sessions/verification.views.js';
export { VerificationListenerError } from './sessions/verification.tracker.js';
export { VerificationReconciler } from './sessions/verification.reconciler.js';
export {
  StandardWebhooksVerifier,
  type StandardWebhooksVerifierOptions,
  type WebhookHeaders,
} from './webhooks/standard-webhooks.verifier.js';
export { WebhookControllerBase, type WebhookAcknowledgement } from './webhooks/webhook.controller.js';
export type { WebhookResult } from './webhooks/webhook-receiver.js';
export type { WebhookRouteOptions } from './webhooks/webhook-route.js';
export {
  VerificationStore,
  MemoryStore,
  RedisStore,
  VerificationStoreUnavailableError,
  type MemoryStoreOptions,
  type RedisStoreOptions,
  type StoreMessageListener,
  type StoreWriteOptions,
} from './store/index.js';
export { VerificationControllerBase } from './http/verification.controller.js';
export { VerificationProtection } from './protection/verification-protection.service.js';
export { ProtectionRefusalReason } from './protection/protection-refusals.js';
export type {
  ProtectedStart,
  StartAttempt,
  StartedSession,
} from './protection/verification-protection.types.js';
export * from './operations/index.js';
