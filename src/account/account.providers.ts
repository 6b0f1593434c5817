import type { Provider } from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationBalanceWatch } from './balance-watch.service.js';
import { VerificationAccountService } from './verification-account.service.js';
import { MethodStats } from './method-stats.service.js';
import { VerificationHealthIndicator } from './verification-health.indicator.js';
import { PriceBook } from './price-book.js';

/**
 * The account and operations providers of VerificationModule, with the observability they report
 * through (prom-client is loaded here only when metrics are on).
 */
export const ACCOUNT_PROVIDERS: Provider[] = [
  VerificationLogger,
  {
    provide: VerificationMetrics,
    useFactory: (options: ResolvedVerificationOptions) => VerificationMetrics.create(options.metrics),
    inject: [RESOLVED_VERIFICATION_OPTIONS],
  },
  PriceBook,
  VerificationAccountService,
  MethodStats,
  VerificationBalanceWatch,
  VerificationHealthIndicator,
  VerificationTelemetry,
];

/** What a host injects: account reads, the balance watch, the health indicator. */
export const ACCOUNT_EXPORTS = [
  VerificationAccountService,
  VerificationBalanceWatch,
  VerificationHealthIndicator,
];
