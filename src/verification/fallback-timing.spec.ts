import { describe, expect, it } from '@jest/globals';
import type { MethodStats } from '../account/method-stats.service.js';
import type { MomentCounts } from '../core/fallback-moment.js';
import { methodStatsFixture, NOON } from '../../test/support/method-stats.fixture.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { FALLBACK_FIGURES_TTL_MS, FallbackTiming } from './fallback-timing.js';

const SETTINGS = { stalledShare: 0.4, waitingShare: 0.4, minSamples: 10, floorMs: 5_000, ceilingMs: 60_000 };
/** 20 verified reverse calls: 10 within 10 s, 10 within 20 s (TIME_TO_VERIFY_BUCKETS_MS). */
const BUCKETS = [0, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const STEP = { method: 'reverse_flash_call', requestId: 'req-1' };
/** The host's fixed moments (`timeoutSeconds`): 45 s for every method these cases use. */
const FIXED = { sms: 45 };

/** FallbackTiming over figures the spec sets, on the spec's clock. */
function timing(): { now: number; counts: MomentCounts; fallback: FallbackTiming } {
  const state = { now: NOON, counts: { started: 0, ended: 0, left: 0, buckets: BUCKETS } as MomentCounts };
  const clock = { now: () => state.now };
  const options = {
    orchestration: { fallback: SETTINGS, timeoutSeconds: FIXED },
    clock: clock.now,
  } as unknown as ResolvedVerificationOptions;
  const stats = { timeToVerify: () => Promise.resolve(state.counts) } as unknown as MethodStats;
  const logger = methodStatsFixture(clock.now).logger();
  return Object.assign(state, { fallback: new FallbackTiming(options, stats, logger) });
}

describe('FallbackTiming: steps still pending a ceiling after their start count as users who did not verify', () => {
  it('a young host: its fast successes count at once, its stalled steps once this instance has read for a ceiling', async () => {
    const t = timing();
    // 100 steps started, the 20 fast ones verified, 80 pending: on their way, or stalled.
    t.counts = { started: 100, ended: 20, left: 0, buckets: BUCKETS };
    // Every step that ended verified: the quantile (the 60th percentile, 12 s) decides.
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
    // A ceiling later, no step ended: the 80 still pending are stalled, a fifth completed (≤ 0.4).
    t.now += SETTINGS.ceilingMs - FALLBACK_FIGURES_TTL_MS;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(SETTINGS.floorMs);
  });

  it('steps started within the ceiling stay on their way; those left for another step are neither', async () => {
    const t = timing();
    t.counts = { started: 40, ended: 20, left: 5, buckets: BUCKETS };
    await t.fallback.afterMs(STEP, '+79123000001', 'mobile');
    t.now += SETTINGS.ceilingMs;
    // 40 started a ceiling ago, 20 ended and 5 left: 15 stalled. The 60 started since are on their
    // way: 20 of 35 verified, (20 − x) ÷ (35 − x) ≤ 0.4 once x = 10 have, at 10 s.
    t.counts = { started: 100, ended: 20, left: 5, buckets: BUCKETS };
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(10_000);
    // Another device's figures learn on their own reads.
    t.counts = { started: 100, ended: 20, left: 0, buckets: BUCKETS };
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
  });
});

describe("FallbackTiming: a device's moment comes from every device's figures until its own hold enough", () => {
  /** Figures per device hint ('' for none), on a clock that stays put. */
  function perDevice(byDevice: Record<string, MomentCounts>): FallbackTiming {
    const none: MomentCounts = { started: 0, ended: 0, left: 0, buckets: [] };
    const options = {
      orchestration: { fallback: SETTINGS, timeoutSeconds: FIXED },
      clock: () => NOON,
    } as unknown as ResolvedVerificationOptions;
    const stats = {
      timeToVerify: (_method: string, _code: string, device?: string) =>
        Promise.resolve(byDevice[device ?? ''] ?? none),
    } as unknown as MethodStats;
    const clock = { now: () => NOON };
    return new FallbackTiming(options, stats, methodStatsFixture(clock.now).logger());
  }
  /** n verified within 10 s and n within 20 s, every started step ended. */
  const verified = (n: number): MomentCounts => ({
    started: 2 * n,
    ended: 2 * n,
    left: 0,
    buckets: [0, n, n, 0, 0, 0, 0, 0, 0, 0, 0, 0],
  });

  it('desktop with 4 verified, mobile with 16: the pooled 20 decide (their 60th percentile, 12 s)', async () => {
    const fallback = perDevice({ desktop: verified(2), mobile: verified(8) });
    expect(await fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
  });

  it("a device's own figures, once they hold minSamples, decide alone", async () => {
    // Desktop: 10 verified, all between 5 and 10 s: their 60th percentile, 8 s (the pool would say 12 s).
    const desktop = { started: 10, ended: 10, left: 0, buckets: [0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
    const fallback = perDevice({ desktop, mobile: verified(8) });
    expect(await fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(8_000);
  });

  it('a method whose code is typed in the page keeps the fixed moment until its own figures hold enough', async () => {
    const fallback = perDevice({ desktop: verified(2), mobile: verified(8) });
    expect(
      await fallback.afterMs({ method: 'flash_call', requestId: 'req-1' }, '+79123000001', 'desktop'),
    ).toBe(45_000);
  });

  it('fewer than minSamples over every device: the fixed timeout', async () => {
    const fallback = perDevice({ desktop: verified(1), mobile: verified(2), '': verified(1) });
    expect(await fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(45_000);
    expect(await fallback.afterMs(STEP, '+79123000001', undefined)).toBe(45_000);
  });
});

describe("FallbackTiming: a calling code's pooled figures are matured against its own earlier reads only", () => {
  it("a code read first a ceiling after another code's read learns from all its figures", async () => {
    let now = NOON;
    const none: MomentCounts = { started: 0, ended: 0, left: 0, buckets: [] };
    // Every device's figures are mobile's here: a desktop step learns from the pool.
    const byCode: Record<string, MomentCounts> = {
      // +7: 100 steps started, none ended yet.
      '7': { started: 100, ended: 0, left: 0, buckets: [] },
      // +998: 20 steps, all verified (10 within 10 s, 10 within 20 s).
      '998': { started: 20, ended: 20, left: 0, buckets: BUCKETS },
    };
    const options = {
      orchestration: { fallback: SETTINGS, timeoutSeconds: FIXED },
      clock: () => now,
    } as unknown as ResolvedVerificationOptions;
    const stats = {
      timeToVerify: (_method: string, code: string, device?: string) =>
        Promise.resolve(device === 'mobile' ? (byCode[code] ?? none) : none),
    } as unknown as MethodStats;
    const fallback = new FallbackTiming(options, stats, methodStatsFixture(() => now).logger());
    expect(await fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(45_000);
    now += SETTINGS.ceilingMs;
    // Matured against +7's read, most of +998's verifications would count as steps started since.
    expect(await fallback.afterMs(STEP, '+998901234567', 'desktop')).toBe(12_000);
  });
});

/** The documented 30 s, written out: a test that read the constant would follow a unit slip in it. */
const FIGURES_TTL_MS = 30_000;

describe('FallbackTiming: a learned moment stands 30 s (FALLBACK_FIGURES_TTL_MS) on the module clock', () => {
  it('figures that changed are not read a tick before it, and are at it', async () => {
    const t = timing();
    t.counts = { started: 20, ended: 20, left: 0, buckets: BUCKETS };
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
    // Every verification now within 10 s: the 60th percentile moves to 8 s once read.
    t.counts = { started: 20, ended: 20, left: 0, buckets: [0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
    t.now += FIGURES_TTL_MS - 1;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(12_000);
    t.now += 1;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'desktop')).toBe(8_000);
  });
});

/** The documented 5 s, written out (FALLBACK_THIN_TTL_MS). */
const THIN_TTL_MS = 5_000;
/** Fewer verified sessions than SETTINGS.minSamples, even the device hints' pooled: the fixed moment. */
const THIN: MomentCounts = { started: 3, ended: 3, left: 0, buckets: [0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
const ENOUGH: MomentCounts = { started: 20, ended: 20, left: 0, buckets: BUCKETS };

describe('FallbackTiming: thin figures of a method completed outside the page are read again after 5 s', () => {
  it('a reverse call: the first learned moment is not read a tick before 5 s, and is at it', async () => {
    const t = timing();
    t.counts = THIN;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(45_000);
    t.counts = ENOUGH;
    t.now += THIN_TTL_MS - 1;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(45_000);
    t.now += 1;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(12_000);
  });

  it('a code method (cut off by a switch) keeps the full 30 s while thin', async () => {
    const t = timing();
    const step = { method: 'sms', requestId: 'req-2' };
    t.counts = THIN;
    expect(await t.fallback.afterMs(step, '+79123000001', 'mobile')).toBe(45_000);
    t.counts = ENOUGH;
    t.now += FIGURES_TTL_MS - 1;
    expect(await t.fallback.afterMs(step, '+79123000001', 'mobile')).toBe(45_000);
    t.now += 1;
    expect(await t.fallback.afterMs(step, '+79123000001', 'mobile')).not.toBe(45_000);
  });

  it('a read that failed stands the full 30 s', async () => {
    const t = timing();
    let reads = 0;
    const failing = {
      timeToVerify: () => {
        reads++;
        return Promise.reject(new Error('store down'));
      },
    } as unknown as MethodStats;
    const options = {
      orchestration: { fallback: SETTINGS, timeoutSeconds: FIXED },
      clock: () => t.now,
    } as unknown as ResolvedVerificationOptions;
    const fallback = new FallbackTiming(options, failing, methodStatsFixture(() => t.now).logger());
    expect(await fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(45_000);
    const first = reads;
    t.now += FIGURES_TTL_MS - 1;
    await fallback.afterMs(STEP, '+79123000001', 'mobile');
    expect(reads).toBe(first);
    t.now += 1;
    await fallback.afterMs(STEP, '+79123000001', 'mobile');
    expect(reads).toBeGreaterThan(first);
  });

  it('a learned moment still stands the full 30 s', async () => {
    const t = timing();
    t.counts = ENOUGH;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(12_000);
    t.counts = { started: 20, ended: 20, left: 0, buckets: [0, 20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
    t.now += THIN_TTL_MS;
    expect(await t.fallback.afterMs(STEP, '+79123000001', 'mobile')).toBe(12_000);
  });
});
