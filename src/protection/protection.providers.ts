import { longestCallMs } from '../api/api-client.options.js';
import type { Provider } from '@nestjs/common';
import { PriceBook } from '../account/price-book.js';
import { UsageReads } from '../ledger/usage-reads.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { PumpingDefence } from '../pumping/pumping-defence.js';
import { RangeStats } from '../pumping/range-stats.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { PriceEstimator } from './price-estimator.js';
import { ProtectionKeys } from './protection-keys.js';
import { ProtectionEvents } from './protection-events.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { ResendCooldown } from './resend-cooldown.js';
import { SpendCap, warnWhenSpendUnbounded } from './spend-cap.js';
import { SpendEvidence } from './spend-evidence.js';
import { StartCoalescer } from './start-coalescer.js';
import { StatusReadMeter } from './status-read-meter.js';
import { VerificationProtection } from './verification-protection.service.js';
import { WrongCodeBudget } from './wrong-code-budget.js';

type Options = ResolvedVerificationOptions;
const ON_THE_STORE = [RESOLVED_VERIFICATION_OPTIONS, VerificationStore];

/**
 * Slack of a start's coalescing claim beyond its paid POST (longestCallMs): the hook and the store calls. An
 * admission that took more than half of it (a slow hook, the spend cap's API reads) renews the claim before the POST.
 */
const CLAIM_SLACK_MS = 10_000;

/**
 * Protection's providers, one per registration: each part is made here from the resolved options
 * and the store, and the facade (VerificationProtection) and ProtectionEvents inject the parts. A
 * part that is off (coalescing, the spend cap) is undefined: nothing of it is built, and its reader
 * says so where it reads it (`if (!this.spendCap)`).
 */
export const PROTECTION_PROVIDERS: Provider[] = [
  {
    provide: RequestRateLimits,
    useFactory: (o: Options, store: VerificationStore) =>
      new RequestRateLimits(store, o.limits, o.dataKeys, o.purposes),
    inject: ON_THE_STORE,
  },
  {
    provide: ResendCooldown,
    useFactory: (o: Options, store: VerificationStore, coalescer?: StartCoalescer) =>
      new ResendCooldown(store, o.limits.resendCooldownMs, o.dataKeys, coalescer),
    inject: [...ON_THE_STORE, StartCoalescer],
  },
  {
    provide: WrongCodeBudget,
    useFactory: (o: Options, store: VerificationStore) => new WrongCodeBudget(store, o.limits, o.dataKeys),
    inject: ON_THE_STORE,
  },
  {
    provide: StartCoalescer,
    useFactory: (o: Options, store: VerificationStore) =>
      o.limits.coalesceStarts
        ? new StartCoalescer(store, {
            claimTtlMs: longestCallMs(o.api, 'POST') + CLAIM_SLACK_MS,
            // Renewed before the POST unless the call and the writes after it still fit in what is left.
            renewBelowMs: longestCallMs(o.api, 'POST') + CLAIM_SLACK_MS / 2,
          })
        : undefined,
    inject: ON_THE_STORE,
  },
  {
    provide: SpendCap,
    useFactory: (
      o: Options,
      store: VerificationStore,
      prices: PriceBook,
      telemetry: VerificationTelemetry,
      usage?: UsageReads,
    ) => {
      const cap = o.limits.spendCap;
      if (!cap) {
        warnWhenSpendUnbounded(o.limits, telemetry.logger);
        return undefined;
      }
      const estimator = new PriceEstimator(prices, o.limits.worstCaseMinor);
      return new SpendCap(
        store,
        cap,
        estimator,
        new SpendEvidence(store, usage, cap, ProtectionKeys.spendAccount(o.api)),
        telemetry,
      );
    },
    inject: [...ON_THE_STORE, PriceBook, VerificationTelemetry, { token: UsageReads, optional: true }],
  },
  {
    provide: PumpingDefence,
    useFactory: (
      o: Options,
      store: VerificationStore,
      telemetry: VerificationTelemetry,
      spendCap?: SpendCap,
    ) => {
      const { pumping, ipv6PrefixLength } = o.limits;
      return new PumpingDefence(
        store,
        pumping,
        ipv6PrefixLength,
        telemetry,
        new RangeStats(store, pumping, o.dataKeys),
        spendCap,
      );
    },
    inject: [...ON_THE_STORE, VerificationTelemetry, SpendCap],
  },
  VerificationProtection,
  ProtectionEvents,
  StatusReadMeter,
];
