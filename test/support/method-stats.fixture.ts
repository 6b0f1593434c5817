/**
 * What the MethodStats specs share: a session record as the tracker stores it (each on a number of its
 * own), a quiet logger, both on the spec's clock, and a MethodStats over a store as the module makes it;
 * methodStatsSuite adds the clock, a fresh store and MethodStats for each test.
 */
import { afterEach, beforeEach } from '@jest/globals';
import { SPEC_DATA_KEYS } from './data-keys.js';
import { telemetryOf } from './telemetry.js';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { FigureEvidence } from '../../src/account/figure-evidence.js';
import { MethodHealthWatch } from '../../src/account/method-health.service.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { emptySums, type Sums } from '../../src/account/method-figures.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationLogger } from '../../src/observability/verification-logger.js';
import { VerificationMetrics } from '../../src/observability/verification-metrics.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';

/** Noon UTC, so that a few minutes either way stay on the same day. */
export const NOON = Date.UTC(2026, 2, 15, 12);
/** The data key a spec's MethodStats digests numbers and callers with. */
export const SPEC_KEYS = { dataKeys: SPEC_DATA_KEYS };
export const rub = (amount: number) => ({ amount, currency: 'RUB' });

export interface MethodStatsFixture {
  session(overrides?: Partial<SessionRecord>): SessionRecord;
  logger(): VerificationLogger;
  /** A MethodStats over `store` as the module makes it; metrics off and a quiet logger unless given. */
  statsOn(
    store: VerificationStore,
    watch?: { metrics?: VerificationMetrics; logger?: VerificationLogger },
  ): MethodStats;
}

export function methodStatsFixture(clock: () => number): MethodStatsFixture {
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
    statsOn(store, { metrics = VerificationMetrics.disabled(), logger: log = logger() } = {}) {
      return new MethodStats(store, telemetryOf(log, metrics), new FigureEvidence(store, SPEC_KEYS.dataKeys));
    },
  };
}

/** The MethodStats specs' life, in the calling file or `describe`. */
export interface MethodStatsSuite extends MethodStatsFixture {
  /** The spec's clock: back at NOON before each test, moved by the test. */
  now: number;
  /** A MemoryStore on the clock, fresh for each test and closed after it. */
  readonly store: MemoryStore;
  /** statsOn(store), fresh for each test. */
  readonly stats: MethodStats;
}

export function methodStatsSuite(): MethodStatsSuite {
  /** The running test's own clock, store and MethodStats: nothing of one test reaches the next. */
  let bed: { now: number; store: MemoryStore; stats: MethodStats } | undefined;
  const fixture = methodStatsFixture(() => suite.now);
  const current = () => {
    if (!bed) throw new Error('the clock, store and MethodStats are made before each test');
    return bed;
  };
  const suite: MethodStatsSuite = {
    ...fixture,
    get now() {
      return current().now;
    },
    set now(at: number) {
      current().now = at;
    },
    get store() {
      return current().store;
    },
    get stats() {
      return current().stats;
    },
  };
  beforeEach(() => {
    const store = new MemoryStore({ clock: () => suite.now });
    bed = { now: NOON, store, stats: fixture.statsOn(store) };
  });
  afterEach(() => bed?.store.close());
  return suite;
}

/** A MethodHealthWatch over the suite's store and MethodStats, on its clock, and the events it emits. */
export function healthWatchOn(fx: MethodStatsSuite): {
  watch: MethodHealthWatch;
  events: MethodHealthEvent[];
} {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => fx.now,
  });
  const emitter = new EventEmitter2();
  const events: MethodHealthEvent[] = [];
  emitter.on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => void events.push(event));
  const watch = new MethodHealthWatch(options, fx.store, fx.stats, telemetryOf(fx.logger()), emitter);
  return { watch, events };
}

/** One method's summed counters: `over` given, every other count 0. */
export const sums = (over: Partial<Sums>): Sums => ({ ...emptySums(), ...over });
