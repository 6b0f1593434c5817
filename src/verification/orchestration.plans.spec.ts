import { describe, expect, it } from '@jest/globals';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import { toPriceList, type PriceBook, type PriceList } from '../account/price-book.js';
import type { MethodHealthWatch } from '../account/method-health.service.js';
import type { MethodStats } from '../account/method-stats.service.js';
import type { MethodSamplesByMethod } from '../core/method-ranking.js';
import {
  resolveVerificationOptions,
  type VerificationModuleOptions,
} from '../options/verification.options.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { CapturingLogger } from '../../test/support/log-capture.js';
import { telemetryOf } from '../../test/support/telemetry.js';
import { OrchestrationPolicy } from './orchestration.policy.js';

/*
 * The policy's plan (the order of the offered methods and what each is expected to cost) in each of its
 * modes, what a status answer reads without waiting (`currentPlan`), and the frontend's switches.
 */

const NOON = Date.parse('2026-11-30T12:00:00Z');
const TTL = 60_000;
const RUB = (amount: number) => ({ amount, currency: 'RUB' });
const CHEAP_FIRST: Prices = {
  prices: [
    { method: 'reverse_flash_call', price: RUB(0.25) },
    { method: 'flash_call', price: RUB(0.8) },
    { method: 'sms', price: RUB(3) },
  ],
};
const SMS_CHEAPEST: Prices = {
  prices: [
    { method: 'reverse_flash_call', price: RUB(5) },
    { method: 'flash_call', price: RUB(4) },
    { method: 'sms', price: RUB(1) },
  ],
};
const OFFERED: KnownVerificationMethod[] = ['sms', 'reverse_flash_call', 'flash_call'];
/** Figures in which the cheap calls almost never verify: per verified user, SMS is cheapest (3.16 RUB, then 25, 40). */
const CALLS_FAIL: MethodSamplesByMethod = {
  sms: { started: 100, verified: 95, callers: 100 },
  flash_call: { started: 100, verified: 2, callers: 100 },
  reverse_flash_call: { started: 100, verified: 1, callers: 100 },
};

interface Rig {
  now: number;
  /** The price list the book holds (null: none read). */
  prices: PriceList | null;
  samples: MethodSamplesByMethod | Error;
  sampleReads: number;
  lines: string[];
  policy: OrchestrationPolicy;
}

function rig(options: Partial<VerificationModuleOptions> = {}): Rig {
  const host = new CapturingLogger();
  const r = {
    now: NOON,
    prices: toPriceList(CHEAP_FIRST),
    samples: {},
    sampleReads: 0,
    lines: host.lines,
  } as unknown as Rig;
  const resolved = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => r.now,
    logger: host,
    pricesTtlMs: TTL,
    ...options,
  });
  const book = {
    latest: () => Promise.resolve(r.prices ?? undefined),
    current: () => r.prices ?? undefined,
  } as unknown as PriceBook;
  const stats = {
    learningSamples: () => {
      r.sampleReads += 1;
      return r.samples instanceof Error ? Promise.reject(r.samples) : Promise.resolve(r.samples);
    },
  } as unknown as MethodStats;
  const health = { state: () => 'healthy' } as unknown as MethodHealthWatch;
  const telemetry = telemetryOf(new VerificationLogger(resolved));
  r.policy = new OrchestrationPolicy(resolved, book, telemetry, stats, health);
  return r;
}

const perSuccess = { orchestration: { mode: 'cost_per_success' as const, minSamples: 10, minCallers: 1 } };

describe('OrchestrationPolicy: the order of each mode', () => {
  it("'price' orders by the price list and never reads the figures; 'cost_per_success' by price ÷ success", async () => {
    const price = rig({ orchestration: { mode: 'price' } });
    price.samples = CALLS_FAIL;
    expect(await price.policy.order(OFFERED)).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    expect(price.sampleReads).toBe(0);
    const learned = rig(perSuccess);
    learned.samples = CALLS_FAIL;
    expect(await learned.policy.order(OFFERED)).toStrictEqual(['sms', 'reverse_flash_call', 'flash_call']);
  });

  it('a fixed `methods` list is the order, only the offered ones of it', async () => {
    const r = rig({ orchestration: { methods: ['flash_call', 'sms', 'reverse_flash_call'] } });
    expect(await r.policy.order(OFFERED)).toStrictEqual(['flash_call', 'sms', 'reverse_flash_call']);
    expect(await r.policy.order(['sms', 'flash_call'])).toStrictEqual(['flash_call', 'sms']);
  });

  it('the plan follows the offered methods and the price list as they change', async () => {
    const r = rig({ orchestration: { mode: 'price' } });
    expect(await r.policy.order(OFFERED)).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    expect(await r.policy.order(['sms', 'flash_call'])).toStrictEqual(['flash_call', 'sms']);
    expect(await r.policy.order(['sms'])).toStrictEqual(['sms']);
    expect(await r.policy.order(['sms', 'reverse_flash_call'])).toStrictEqual(['reverse_flash_call', 'sms']);
    expect(await r.policy.order(['sms', 'flash_call'])).toStrictEqual(['flash_call', 'sms']);
    r.prices = toPriceList(SMS_CHEAPEST);
    expect(await r.policy.order(['sms', 'flash_call'])).toStrictEqual(['sms', 'flash_call']);
    expect((await r.policy.plan(['sms', 'flash_call'])).priceOf('flash_call')).toBe(400);
  });

  it('with no list read, the offered order stands on every plan', async () => {
    const r = rig({ orchestration: { mode: 'price' } });
    r.prices = null;
    expect(await r.policy.order(OFFERED)).toStrictEqual(OFFERED);
    expect(await r.policy.order(['flash_call', 'sms'])).toStrictEqual(['flash_call', 'sms']);
  });
});

describe("OrchestrationPolicy: 'cost_per_success' reads the figures once per pricesTtlMs (module clock)", () => {
  it('new figures reorder the methods at the bound, not one tick before', async () => {
    const r = rig(perSuccess);
    expect(await r.policy.order(OFFERED)).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    r.samples = CALLS_FAIL;
    r.now += TTL - 1;
    expect(await r.policy.order(OFFERED)).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    expect(r.sampleReads).toBe(1);
    r.now += 1;
    expect(await r.policy.order(OFFERED)).toStrictEqual(['sms', 'reverse_flash_call', 'flash_call']);
    expect(r.sampleReads).toBe(2);
  });

  it('a failed read is logged and the price order stands until the next read', async () => {
    const r = rig(perSuccess);
    r.samples = new Error('store down');
    expect(await r.policy.order(OFFERED)).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    const warned = r.lines.filter((line) => line.includes('method figures could not be read'));
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatch(/^warn orchestration: method figures could not be read; price order stands/);
    expect(warned[0]).toContain('store down');
    r.samples = CALLS_FAIL;
    r.now += TTL;
    expect(await r.policy.order(OFFERED)).toStrictEqual(['sms', 'reverse_flash_call', 'flash_call']);
  });
});

describe('OrchestrationPolicy: the plan a status answer reads without waiting (currentPlan)', () => {
  it('none while no price list is current; the priced plan once one is', async () => {
    const r = rig({ orchestration: { mode: 'price' } });
    r.prices = null;
    expect(r.policy.currentPlan(OFFERED)).toBeUndefined();
    r.prices = toPriceList(CHEAP_FIRST);
    const plan = r.policy.currentPlan(OFFERED);
    expect(plan?.order).toStrictEqual(['reverse_flash_call', 'flash_call', 'sms']);
    expect(plan?.priceOf('sms')).toBe(300);
  });

  it("'cost_per_success': none until the figures were read, then their plan until pricesTtlMs passes", async () => {
    const r = rig(perSuccess);
    r.samples = CALLS_FAIL;
    expect(r.policy.currentPlan(OFFERED)).toBeUndefined();
    expect(r.sampleReads).toBe(0);
    await r.policy.plan(OFFERED);
    expect(r.policy.currentPlan(OFFERED)?.order).toStrictEqual(['sms', 'reverse_flash_call', 'flash_call']);
    r.now += TTL - 1;
    expect(r.policy.currentPlan(OFFERED)?.order).toStrictEqual(['sms', 'reverse_flash_call', 'flash_call']);
    r.now += 1;
    expect(r.policy.currentPlan(OFFERED)).toBeUndefined();
    expect(r.sampleReads).toBe(1);
  });
});

describe('OrchestrationPolicy: the frontend’s switches and the journey’s steps', () => {
  it("`skippable: 'all'` lets every method be left; a list only its methods; [] none", () => {
    expect(rig().policy.skippable('sms')).toBe(true);
    expect(rig({ orchestration: { skippable: 'all' } }).policy.skippable('flash_call')).toBe(true);
    const listed = rig({ orchestration: { skippable: ['flash_call'] } }).policy;
    expect([listed.skippable('flash_call'), listed.skippable('sms')]).toStrictEqual([true, false]);
    const none = rig({ orchestration: { skippable: [] } }).policy;
    expect([none.skippable('flash_call'), none.skippable('sms')]).toStrictEqual([false, false]);
  });

  it('maxSteps is the option, 3 by default', () => {
    expect(rig().policy.maxSteps).toBe(3);
    expect(rig({ orchestration: { maxSteps: 2 } }).policy.maxSteps).toBe(2);
  });

  it('exclude is the option per device hint', () => {
    const r = rig({ orchestration: { exclude: { desktop: ['flash_call'] } } });
    expect(r.policy.exclude.desktop).toStrictEqual(['flash_call']);
    expect(r.policy.exclude.mobile).toStrictEqual([]);
  });
});
