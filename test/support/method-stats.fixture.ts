/**
 * What the MethodStats specs share: a session record as the tracker stores it (each on a number of its
 * own), a quiet logger, both on the spec's clock, and a MethodStats over a store as the module makes it.
 */
import { SPEC_DATA_KEYS } from './data-keys.js';
import { telemetryOf } from './telemetry.js';
import { FigureEvidence } from '../../src/account/figure-evidence.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { Sums } from '../../src/account/method-figures.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';

/** Noon UTC, so that a few minutes either way stay on the same day. */
export const NOON = Date.UTC(2026, 2, 15, 12);
/** The data key a spec's MethodStats digests numbers and callers with. */
export const SPEC_KEYS = { dataKeys: SPEC_DATA_KEYS };
export const rub = (amount: number) => ({ amount, currency: 'RUB' });

export function methodStatsFixture(clock: () => number): {
  session(overrides?: Partial<SessionRecord>): SessionRecord;
  logger(): VerificationLogger;
  statsOn(store: VerificationStore, metrics?: VerificationMetrics): MethodStats;
} {
  let seq = 0;
  const logger = (): VerificationLogger => {
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock,
    });
    return new VerificationLogger({ ...options, logLevels: false });
  };
  return {
    session(overrides = {}) {
      seq += 1;
      const now = clock();
      return {
        requestId: `req-${seq}`,
        // A number of its own: the figures count a number's first session of the day only.
        phoneNumber: `+79123${String(seq).padStart(6, '0')}`,
        method: 'sms',
        status: 'sent',
        awaitingCode: true,
        createdAt: now,
        expiresAt: now + 300_000,
        verifiedAt: null,
        cost: rub(3),
        ...overrides,
      };
    },
    logger,
    statsOn(store, metrics = VerificationMetrics.disabled()) {
      return new MethodStats(
        store,
        telemetryOf(logger(), metrics),
        new FigureEvidence(store, SPEC_KEYS.dataKeys),
      );
    },
  };
}

/** One method's summed counters: `over` given, every other count 0. */
export const sums = (over: Partial<Sums>): Sums => ({
  started: 0,
  delivered: 0,
  verified: 0,
  expired: 0,
  failed: 0,
  chargedMinor: 0,
  callers: 0,
  left: 0,
  unproven: 0,
  rescued: 0,
  buckets: [],
  ...over,
});
