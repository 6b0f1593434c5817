export { VerificationAccountService } from './verification-account.service.js';
export { VerificationBalanceWatch, type BalanceReading } from './balance-watch.service.js';
export {
  VerificationHealthIndicator,
  type VerificationHealthOptions,
  type VerificationHealthReason,
  type VerificationHealthResult,
  type VerificationHealthStatus,
} from './verification-health.indicator.js';
export { DEFAULT_METRICS_PREFIX } from './verification-metrics.js';
export type { RefusalReason } from './refusal-reason.js';
