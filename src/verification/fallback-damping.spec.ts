import { describe, expect, it } from '@jest/globals';
import type { MethodStats } from '../account/method-stats.service.js';
import { isProbeStep, type MomentCounts } from '../core/fallback-moment.js';
import { DAMPED_SHARE_PER_MINUTE, SETTLED_AFTER_MS } from '../core/moment-damping.js';
import { NOON } from '../../test/support/method-stats.fixture.js';
import type { FallbackMomentEvent } from '../core/verification-events.js';
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

function timing(settings: typeof SETTINGS | { waitingShare: number } = SETTINGS) {
  const state = { now: NOON, counts: { started: 20, ended: 20, left: 0, buckets: SLOW } as MomentCounts };
  const warnings: { message: string; context: unknown }[] = [];
  const events: FallbackMomentEvent[] = [];
  const options = {
    orchestration: { fallback: { ...SETTINGS, ...settings }, timeoutSeconds: { sms: 45 } },
    clock: () => state.now,
  } as unknown as ResolvedVerificationOptions;
  const stats = { timeToVerify: () => Promise.resolve(state.counts) } as unknown as MethodStats;
  const logger = {
    warn: (message: string, context: unknown) => warnings.push({ message, context }),
  } as unknown as VerificationLogger;
  const fallback = new FallbackTiming(options, stats, logger, (event) => {
    events.push(event);
    return Promise.resolve();
  });
  const moment = () => fallback.afterMs(STEP, '+79123000001', 'mobile');
  return Object.assign(state, { warnings, events, fallback, moment });
}

/** One damped step up or down from `ms` after `minutes` (the rule's own arithmetic). */
const step = (ms: number, minutes: number, sign = 1) =>
  Math.round(ms + sign * ms * DAMPED_SHARE_PER_MINUTE * minutes);
/** Figures of 3 verified per device hint: 9 over every device, fewer than minSamples (10): thin. */
const THIN: MomentCounts = { started: 30, ended: 3, left: 0, buckets: [0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0] };

/** `timing` settled on SLOW figures (37.5 s) for SETTLED_AFTER_MS of reads. */
async function settledTiming(settings?: { waitingShare: number }) {
  const t = timing(settings);
  for (let i = 0; i <= SETTLED_AFTER_MS / FALLBACK_FIGURES_TTL_MS; i++) {
    if (i > 0) t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(37_500);
  }
  return t;
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
    // Once per jump: the figures' first target, then the floor they went on to (REPORT_AGAIN_SHARE
    // further), never once per read.
    expect(t.warnings.map((w) => (w.context as { learned_ms: number }).learned_ms)).toStrictEqual([
      35_000, 10_000,
    ]);
  });
});

describe('FallbackTiming: figures turned thin are no evidence; the learned moment moves to the fixed one at the damped pace', () => {
  it('a young host whose figures thin out keeps its learned moment (one bounded step a read) and reports it', async () => {
    const t = timing();
    expect(await t.moment()).toBe(37_500);
    t.counts = THIN;
    t.now += FALLBACK_FIGURES_TTL_MS;
    const held = await t.moment();
    expect(held).toBe(step(37_500, 0.5));
    expect(t.events).toStrictEqual([
      {
        event: 'verification.fallback_moment',
        method: 'reverse_flash_call',
        callingCode: '+7',
        device: 'mobile',
        figures: 'thin',
        adoptedMs: 37_500,
        targetMs: 45_000,
        afterMs: held,
        at: new Date(t.now),
      },
    ]);
    expect(t.warnings).toHaveLength(1);
    expect(JSON.stringify([t.events, t.warnings])).not.toContain('9123000001');
    // Still thin: one bounded step a read toward the fixed 45 s, never past it; reported once.
    let last = held;
    for (let i = 0; i < 120; i++) {
      t.now += FALLBACK_FIGURES_TTL_MS;
      const next = await t.moment();
      expect(next).toBe(Math.min(step(last, 0.5), 45_000));
      last = next;
    }
    expect(last).toBe(45_000);
    expect(t.events).toHaveLength(1);
  });

  it('the next learned moment of a young range is adopted at once (not damped toward the thin reads)', async () => {
    const t = timing();
    expect(await t.moment()).toBe(37_500);
    t.counts = THIN;
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(step(37_500, 0.5));
    t.counts = { started: 80, ended: 80, left: 0, buckets: POISONED };
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(10_000);
  });

  it('figures that never taught a moment give the fixed one, unlearned (a probe is not held to the ceiling), reporting nothing', async () => {
    const t = timing();
    t.counts = THIN;
    const probe = { method: 'flash_call', requestId: probeId() };
    for (let i = 0; i < 40; i++) {
      expect(await t.moment()).toBe(45_000);
      expect(await t.fallback.afterMs(probe, '+79123000001', 'mobile')).toBe(45_000);
      t.now += FALLBACK_FIGURES_TTL_MS;
    }
    expect([t.warnings, t.events]).toStrictEqual([[], []]);
  });
});

describe('FallbackTiming: what a thin read leaves behind', () => {
  it('a host thin for longer than SETTLED_AFTER_MS adopts its first learned moment at once', async () => {
    const t = timing();
    t.counts = THIN;
    for (let i = 0; i <= (2 * SETTLED_AFTER_MS) / FALLBACK_FIGURES_TTL_MS; i++) {
      expect(await t.moment()).toBe(45_000);
      t.now += FALLBACK_FIGURES_TTL_MS;
    }
    t.counts = { started: 80, ended: 80, left: 0, buckets: POISONED };
    // Not one damped step from 45 s: no moment was adopted to damp from.
    expect(await t.moment()).toBeLessThan(step(45_000, 0.5, -1));
    expect([t.events, t.warnings]).toStrictEqual([[], []]);
  });

  it('a learned moment held through thin figures keeps probes at the ceiling (they feed the figures)', async () => {
    const t = timing();
    const probe = { method: 'flash_call', requestId: probeId() };
    const other = { method: 'flash_call', requestId: 'req-1' };
    expect(isProbeStep('flash_call', other.requestId)).toBe(false);
    expect(await t.fallback.afterMs(other, '+79123000001', 'mobile')).toBe(37_500);
    t.counts = THIN;
    t.now += FALLBACK_FIGURES_TTL_MS;
    // flash_call learns from its device's figures alone: 3 verified, thin; the moment is held.
    expect(await t.fallback.afterMs(other, '+79123000001', 'mobile')).toBe(step(37_500, 0.5));
    expect(await t.fallback.afterMs(probe, '+79123000001', 'mobile')).toBe(SETTINGS.ceilingMs);
  });

  it('each new jump is reported again once the moment stood within its range', async () => {
    const t = await settledTiming();
    t.counts = { started: 80, ended: 80, left: 0, buckets: POISONED };
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(step(37_500, 0.5, -1));
    t.counts = { started: 20, ended: 20, left: 0, buckets: SLOW };
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(37_500);
    t.counts = { started: 80, ended: 80, left: 0, buckets: POISONED };
    t.now += FALLBACK_FIGURES_TTL_MS;
    expect(await t.moment()).toBe(step(37_500, 0.5, -1));
    expect(t.events).toHaveLength(2);
  });
});

describe('FallbackTiming (attack): free starts and a farm dialling late move a settled moment no faster than the damping', () => {
  it('a farm dialling its numbers at 85 s: at most DAMPED_SHARE_PER_MINUTE a minute up, reported once', async () => {
    const t = await settledTiming();
    // 60 verified within (75 s, 90 s]: the median of what is verified jumps toward 85 s.
    t.counts = { started: 80, ended: 80, left: 0, buckets: [0, 0, 0, 0, 20, 0, 0, 0, 60, 0, 0, 0] };
    let last = 37_500;
    for (let read = 0; read < 20; read++) {
      t.now += FALLBACK_FIGURES_TTL_MS;
      const next = await t.moment();
      expect(next).toBe(step(last, 0.5));
      last = next;
    }
    // Ten minutes on: 3 % a minute of the moment (compounded per read), far from the farm's.
    expect(last).toBeLessThan(52_000);
    expect(t.events).toStrictEqual([
      expect.objectContaining({ figures: 'learned', adoptedMs: 37_500, afterMs: step(37_500, 0.5) }),
    ]);
    expect(t.events[0]!.targetMs).toBeGreaterThan(75_000);
  });

  it('150 free starts nobody completes, pending a ceiling on: at most DAMPED_SHARE_PER_MINUTE a minute down', async () => {
    const t = await settledTiming({ waitingShare: 0.4 });
    t.counts = { ...t.counts, started: t.counts.started + 150 };
    t.now += FALLBACK_FIGURES_TTL_MS;
    // Started after the read a ceiling ago: on their way, the moment stands.
    expect(await t.moment()).toBe(37_500);
    t.now += SETTINGS.ceilingMs;
    // A ceiling on they are stalled (the figures: the floor); the moment moved one step of 1.5 minutes.
    const first = await t.moment();
    expect(first).toBe(step(37_500, SETTINGS.ceilingMs / 60_000, -1));
    expect(t.events).toStrictEqual([expect.objectContaining({ figures: 'learned', targetMs: 10_000 })]);
    t.now += FALLBACK_FIGURES_TTL_MS - 1;
    expect(await t.moment()).toBe(first);
    t.now += 1;
    expect(await t.moment()).toBe(step(first, 0.5, -1));
  });
});

/** A request id whose step is a probe (isProbeStep). */
function probeId(): string {
  for (let i = 0; ; i++) if (isProbeStep('flash_call', `req-${i}`)) return `req-${i}`;
}
