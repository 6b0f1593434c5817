import { describe, expect, it } from '@jest/globals';
import type { MethodStats } from '../account/method-stats.service.js';
import type { MomentCounts } from '../core/fallback-moment.js';
import { DAMPED_SHARE_PER_MINUTE, SETTLED_AFTER_MS } from '../core/moment-damping.js';
import { NOON } from '../../test/support/method-stats.fixture.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { FALLBACK_FIGURES_TTL_MS, FallbackTiming } from './fallback-timing.js';

const SETTINGS = {
  stalledShare: 0.5,
  waitingShare: false,
  minSamples: 10,
  floorMs: 10_000,
  ceilingMs: 90_000,
};
/** 20 verified reverse calls within (30 s, 45 s]: a median of 37.5 s. */
const SLOW = [0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0];
/** The same, and 60 more within 10 s: the median falls to 10 s. */
const POISONED = [0, 60, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0];
const STEP = { method: 'reverse_flash_call', requestId: 'req-1' };

function timing() {
  const state = { now: NOON, counts: { started: 20, ended: 20, left: 0, buckets: SLOW } as MomentCounts };
  const warnings: { message: string; context: unknown }[] = [];
  const options = {
    orchestration: { fallback: SETTINGS, timeoutSeconds: { sms: 45 } },
    clock: () => state.now,
  } as unknown as ResolvedVerificationOptions;
  const stats = { timeToVerify: () => Promise.resolve(state.counts) } as unknown as MethodStats;
  const logger = {
    warn: (message: string, context: unknown) => warnings.push({ message, context }),
  } as unknown as VerificationLogger;
  return Object.assign(state, { warnings, fallback: new FallbackTiming(options, stats, logger) });
}

describe('FallbackTiming: a jump of the learned moment beyond its recent range is damped and reported', () => {
  it('moves gradually, warns once per jump, and reaches the figures within the hour', async () => {
    const t = timing();
    const moment = () => t.fallback.afterMs(STEP, '+79123000001', 'mobile');
    const settled = await moment();
    expect(settled).toBe(37_500);
    // The range settles over SETTLED_AFTER_MS of reads.
    for (let i = 0; i < SETTLED_AFTER_MS / FALLBACK_FIGURES_TTL_MS; i++) {
      t.now += FALLBACK_FIGURES_TTL_MS;
      expect(await moment()).toBe(settled);
    }
    t.counts = { started: 80, ended: 80, left: 0, buckets: POISONED };
    t.now += FALLBACK_FIGURES_TTL_MS;
    const first = await moment();
    expect(first).toBe(Math.round(settled * (1 - DAMPED_SHARE_PER_MINUTE / 2)));
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]!.message).toMatch(/jumped beyond its recent range/);
    expect(t.warnings[0]!.context).toMatchObject({ method: 'reverse_flash_call', adopted_ms: settled });
    expect(JSON.stringify(t.warnings)).not.toContain('9123000001');
    let minutes = 0.5;
    let last = first;
    while (last > 10_000 && minutes < 120) {
      t.now += FALLBACK_FIGURES_TTL_MS;
      minutes += 0.5;
      const next = await moment();
      expect(next).toBeLessThanOrEqual(last);
      last = next;
    }
    expect(minutes).toBeGreaterThan(30);
    expect(minutes).toBeLessThanOrEqual(60);
    expect(t.warnings).toHaveLength(1);
  });
});
