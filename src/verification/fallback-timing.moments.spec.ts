import { describe, expect, it } from '@jest/globals';
import type { MethodStats } from '../account/method-stats.service.js';
import type { MomentCounts } from '../core/fallback-moment.js';
import { SETTLED_AFTER_MS } from '../core/moment-damping.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { FALLBACK_FIGURES_TTL_MS, FallbackTiming } from './fallback-timing.js';

/*
 * When a step may fall back (`fallback_available_at`): the probe steps once a moment is learned, a
 * failed read of the figures, one read for the steps that ask meanwhile, the reads of a ceiling ago
 * (over the same window of days), and the report of a damped jump per device.
 */

const NOON = Date.parse('2026-11-30T12:00:00Z');
const SETTINGS = { stalledShare: 0.4, waitingShare: 0.4, minSamples: 10, floorMs: 5_000, ceilingMs: 60_000 };
/** 20 verified steps: 10 within 10 s, 10 within 20 s; their 60th percentile, 12 s. */
const BUCKETS = [0, 10, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const LEARNED: MomentCounts = { started: 20, ended: 20, left: 0, buckets: BUCKETS };
const THIN: MomentCounts = { started: 4, ended: 4, left: 0, buckets: [0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0] };
/** SMS steps whose request ids draw a probe (isProbeStep: one in PROBE_EVERY), and one that does not. */
const PROBE = { method: 'sms', requestId: 'req-13' };
const PLAIN = { method: 'sms', requestId: 'req-1' };
const FIXED_MS = 45_000;

function timing(start = NOON) {
  const state = {
    now: start,
    counts: LEARNED as MomentCounts | Error,
    reads: 0,
    /** Something not an Error the store throws, when set. */
    thrown: undefined as unknown,
    warnings: [] as { message: string; context: Record<string, unknown> }[],
  };
  const options = {
    orchestration: { fallback: SETTINGS, timeoutSeconds: { sms: FIXED_MS / 1000 } },
    clock: () => state.now,
  } as unknown as ResolvedVerificationOptions;
  const stats = {
    timeToVerify: () => {
      state.reads += 1;
      if (state.thrown !== undefined) return Promise.reject(state.thrown);
      return state.counts instanceof Error ? Promise.reject(state.counts) : Promise.resolve(state.counts);
    },
  } as unknown as MethodStats;
  const logger = {
    warn: (message: string, context: Record<string, unknown>) => state.warnings.push({ message, context }),
  } as unknown as VerificationLogger;
  const fallback = new FallbackTiming(options, stats, logger);
  const at = (step: { method: string; requestId: string }, device: 'mobile' | 'none' = 'mobile') =>
    fallback.afterMs(step, '+79123000001', device === 'none' ? undefined : device);
  return Object.assign(state, { fallback, at });
}

describe('FallbackTiming: probe steps', () => {
  it('a probe step falls back at the ceiling once the moment is learned, at the fixed moment until then', async () => {
    const t = timing();
    t.counts = THIN;
    expect([await t.at(PROBE), await t.at(PLAIN)]).toStrictEqual([FIXED_MS, FIXED_MS]);
    t.counts = LEARNED;
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect([await t.at(PROBE), await t.at(PLAIN)]).toStrictEqual([SETTINGS.ceilingMs, 12_000]);
  });

  it('with learning off (`fallback: false`) every step, a probe too, falls back at the fixed moment', async () => {
    const options = {
      orchestration: { fallback: false, timeoutSeconds: { sms: 50 } },
      clock: () => NOON,
    } as unknown as ResolvedVerificationOptions;
    const stats = { timeToVerify: () => Promise.resolve(LEARNED) } as unknown as MethodStats;
    const fallback = new FallbackTiming(options, stats, { warn: () => {} } as unknown as VerificationLogger);
    expect(await fallback.afterMs(PROBE, '+79123000001', 'mobile')).toBe(50_000);
    expect(await fallback.momentMs('sms', '+79123000001', undefined)).toBe(50_000);
  });
});

describe('FallbackTiming: a failed read of the figures', () => {
  it('before any moment: the fixed one (a probe too), and a warning naming the method, not the number', async () => {
    const t = timing();
    t.counts = new TypeError('store down');
    expect([await t.at(PROBE), await t.at(PLAIN)]).toStrictEqual([FIXED_MS, FIXED_MS]);
    expect(t.warnings).toHaveLength(1);
    expect(t.warnings[0]!.message).toBe(
      'orchestration: method figures could not be read; the fallback moment stands',
    );
    expect(t.warnings[0]!.context).toStrictEqual({ method: 'sms', error: 'TypeError' });
    // Something thrown that is not an Error is named `error`, never shown.
    const odd = timing();
    odd.thrown = 'down';
    expect(await odd.at(PLAIN)).toBe(FIXED_MS);
    expect(odd.warnings.map((w) => w.context)).toStrictEqual([{ method: 'sms', error: 'error' }]);
  });

  it('after a learned moment: that moment stands (its probes at the ceiling) until a read succeeds', async () => {
    const t = timing();
    expect(await t.at(PLAIN)).toBe(12_000);
    t.counts = new Error('store down');
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect([await t.at(PLAIN), await t.at(PROBE)]).toStrictEqual([12_000, SETTINGS.ceilingMs]);
    expect(t.warnings.map((w) => w.context['error'])).toStrictEqual(['Error']);
  });
});

describe('FallbackTiming: reads', () => {
  it('one read of the figures serves the steps that ask while it runs', async () => {
    const t = timing();
    expect(await Promise.all([t.at(PLAIN), t.at(PLAIN), t.at(PLAIN)])).toStrictEqual([
      12_000, 12_000, 12_000,
    ]);
    expect(t.reads).toBe(1);
    t.now += FALLBACK_FIGURES_TTL_MS;
    await Promise.all([t.at(PLAIN), t.at(PLAIN)]);
    expect(t.reads).toBe(2);
  });

  it('a host that ran on its fixed moment adopts the first learned one at once (only learned moments are damped)', async () => {
    const t = timing();
    t.counts = THIN;
    for (let waited = 0; waited <= SETTLED_AFTER_MS; waited += FALLBACK_FIGURES_TTL_MS) {
      expect(await t.at(PLAIN)).toBe(FIXED_MS);
      t.now += FALLBACK_FIGURES_TTL_MS;
    }
    // Figures that fill: learned once this instance has read them for a ceiling (matureFigures).
    t.counts = LEARNED;
    expect(await t.at(PLAIN)).toBe(FIXED_MS);
    t.now += SETTINGS.ceilingMs;
    expect(await t.at(PLAIN)).toBe(12_000);
    expect(t.warnings).toStrictEqual([]);
  });

  it('the read of a ceiling ago stays the one compared with, however many reads come after it', async () => {
    const t = timing();
    // 100 steps started, 20 verified fast, 80 pending.
    t.counts = { started: 100, ended: 20, left: 0, buckets: BUCKETS };
    const step = { method: 'reverse_flash_call', requestId: 'req-1' };
    expect(await t.at(step)).toBe(12_000);
    t.now += SETTINGS.ceilingMs;
    // A ceiling later, none ended: the 80 are stalled.
    expect(await t.at(step)).toBe(SETTINGS.floorMs);
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.at(step)).toBe(SETTINGS.floorMs);
  });

  it('a read of yesterday’s window is not compared with today’s: past midnight the figures start afresh', async () => {
    const t = timing(Date.parse('2026-11-30T23:59:00Z'));
    t.counts = { started: 100, ended: 20, left: 0, buckets: BUCKETS };
    const step = { method: 'reverse_flash_call', requestId: 'req-1' };
    expect(await t.at(step)).toBe(12_000);
    t.now += SETTINGS.ceilingMs;
    expect(await t.at(step)).toBe(12_000);
  });
});

describe('FallbackTiming: a damped jump is reported with its device', () => {
  /** The warnings of a host whose moment settled at 39 s for `device`, then jumped. */
  async function jumped(device: 'mobile' | 'none') {
    const t = timing();
    const reverse = { method: 'reverse_flash_call', requestId: 'req-1' };
    t.counts = { started: 20, ended: 20, left: 0, buckets: [0, 0, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0] };
    for (let waited = 0; waited <= SETTLED_AFTER_MS; waited += FALLBACK_FIGURES_TTL_MS) {
      expect(await t.at(reverse, device)).toBe(39_000);
      t.now += FALLBACK_FIGURES_TTL_MS;
    }
    t.counts = { started: 80, ended: 80, left: 0, buckets: [0, 60, 0, 0, 20, 0, 0, 0, 0, 0, 0, 0] };
    expect(await t.at(reverse, device)).toBeLessThan(39_000);
    return t.warnings.map((w) => w.context);
  }

  it('names the device hint, `none` for an unhinted start, and the moment adopted before', async () => {
    const report = {
      method: 'reverse_flash_call',
      calling_code: '7',
      adopted_ms: 39_000,
      figures: 'learned',
    };
    expect(await jumped('mobile')).toStrictEqual([
      { ...report, device: 'mobile', learned_ms: expect.any(Number) },
    ]);
    expect(await jumped('none')).toStrictEqual([
      { ...report, device: 'none', learned_ms: expect.any(Number) },
    ]);
  });
});
