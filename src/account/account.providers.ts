import type { Provider } from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { VerificationBalanceWatch } from './balance-watch.service.js';
import { VerificationAccountService } from './verification-account.service.js';
import { MethodStats } from './method-stats.service.js';
import { FigureEvidence } from './figure-evidence.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { MethodHealthWatch } from './method-health.service.js';
import { VerificationHealthIndicator } from './verification-health.indicator.js';
import { PriceBook } from './price-book.js';

/**
 * The account and operations providers of VerificationModule, with the observability they report
 * through: one provider, VerificationTelemetry, holding the logger and the metrics.
 */
export const ACCOUNT_PROVIDERS: Provider[] = [
  {
    provide: VerificationTelemetry,
    useFactory: (options: ResolvedVerificationOptions, emitter?: EventEmitter2) =>
      VerificationTelemetry.create(options, emitter),
    inject: [RESOLVED_VERIFICATION_OPTIONS, { token: EventEmitter2, optional: true }],
  },
  PriceBook,
  VerificationAccountService,
  {
    provide: FigureEvidence,
    useFactory: (options: ResolvedVerificationOptions, store: VerificationStore) =>
      new FigureEvidence(store, options.dataKeys),
    inject: [RESOLVED_VERIFICATION_OPTIONS, VerificationStore],
  },
  MethodStats,
  MethodHealthWatch,
  VerificationBalanceWatch,
  VerificationHealthIndicator,
];

/** What a host injects: account reads, the balance watch, the health indicator. */
export const ACCOUNT_EXPORTS = [
  VerificationAccountService,
  VerificationBalanceWatch,
  VerificationHealthIndicator,
];
