/**
 * A FallbackTiming on figures a spec sets (`counts`) and a clock it moves (`now`), with the warnings and
 * `verification.fallback_moment` events it gives: the fallback moment's attack parts' host.
 */
import { expect } from '@jest/globals';
import type { MethodStats } from '../../src/account/method-stats.service.js';
import type { MomentCounts } from '../../src/core/fallback-moment.js';
import { SETTLED_AFTER_MS } from '../../src/core/moment-damping.js';
import type { FallbackMomentEvent } from '../../src/core/verification-events.js';
import type { VerificationLogger } from '../../src/observability/verification-logger.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import { FALLBACK_FIGURES_TTL_MS, FallbackTiming } from '../../src/verification/fallback-timing.js';
import { NOON } from './method-stats.fixture.js';

/** Learned moments between a 10 s floor and a 90 s ceiling, from 10 samples. */
export const MOMENT_SETTINGS = {
  stalledShare: 0.5,
  waitingShare: false,
  minSamples: 10,
  floorMs: 10_000,
  ceilingMs: 90_000,
};
const STEP = { method: 'reverse_flash_call', requestId: 'req-1' };

/** Verified sessions of `buckets` (the figures' buckets), all ended. */
export const verifiedIn = (buckets: number[]): MomentCounts => {
  const total = buckets.reduce((a, b) => a + b, 0);
  return { started: total, ended: total, left: 0, buckets };
};

/** A host at NOON on `counts`; `moment()` reads a +7 mobile reverse call's moment. */
export function fallbackHost(counts: MomentCounts) {
  const state = { now: NOON, counts };
  const warnings: string[] = [];
  const events: FallbackMomentEvent[] = [];
  const options = {
    orchestration: { fallback: MOMENT_SETTINGS, timeoutSeconds: { sms: 45 } },
    clock: () => state.now,
  } as unknown as ResolvedVerificationOptions;
  const stats = { timeToVerify: () => Promise.resolve(state.counts) } as unknown as MethodStats;
  const logger = { warn: (message: string) => warnings.push(message) } as unknown as VerificationLogger;
  const fallback = new FallbackTiming(options, stats, logger, (event) => {
    events.push(event);
    return Promise.resolve();
  });
  const moment = () => fallback.afterMs(STEP, '+79123000001', 'mobile');
  return Object.assign(state, { warnings, events, moment });
}

/** Such a host whose moment (`expected`) has been read every 30 s for SETTLED_AFTER_MS: a settled range. */
export async function settledFallbackHost(counts: MomentCounts, expected: number) {
  const t = fallbackHost(counts);
  for (let i = 0; i <= SETTLED_AFTER_MS / FALLBACK_FIGURES_TTL_MS; i++) {
    if (i > 0) t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(expected);
  }
  return t;
}
