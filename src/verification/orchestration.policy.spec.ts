import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import { toPriceList, type PriceBook } from '../account/price-book.js';
import type { HealthState } from '../account/method-health.js';
import type { MethodHealthWatch } from '../account/method-health.service.js';
import type { MethodStats } from '../account/method-stats.service.js';
import { oneStepJourney, switchableMethods } from '../core/journey.js';
import { newSessionRecord } from '../core/session-record.js';
import {
  resolveVerificationOptions,
  type VerificationModuleOptions,
} from '../options/verification.options.js';
import { OrchestrationPolicy } from './orchestration.policy.js';
import { telemetryOf } from '../../test/support/telemetry.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const RUB = (amount: number) => ({ amount, currency: 'RUB' });
const PRICES: Prices = {
  prices: [
    { method: 'reverse_flash_call', price: RUB(0.25) },
    { method: 'flash_call', price: RUB(0.8) },
    { method: 'sms', price: RUB(3) },
  ],
};
const OFFERED: KnownVerificationMethod[] = ['reverse_flash_call', 'flash_call', 'sms'];

/** A policy over a fake account whose price list is `prices` (undefined: it cannot be read). */
function policy(
  options: Partial<VerificationModuleOptions>,
  prices: Prices | undefined,
  health: HealthState | ((method: string) => HealthState) = 'healthy',
): OrchestrationPolicy {
  const of = (method: string) => (typeof health === 'function' ? health(method) : health);
  const resolved = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => NOW,
    ...options,
  });
  const list = prices && toPriceList(prices);
  const book = { latest: () => Promise.resolve(list), current: () => list } as unknown as PriceBook;
  return new OrchestrationPolicy(
    resolved,
    book,
    telemetryOf(resolved),
    {
      learningSamples: () => Promise.resolve({}),
      timeToVerify: () => Promise.resolve({ started: 0, ended: 0, left: 0, buckets: [] }),
    } as unknown as MethodStats,
    {
      state: (method: string) => of(method),
      refresh: (method: string) => Promise.resolve(of(method)),
      known: (method: string) => Promise.resolve(of(method)),
    } as unknown as MethodHealthWatch,
  );
}

/** The methods a journey whose pending SMS holds 3.00 RUB may switch to under the policy's ceilings. */
async function switchableAfterSms(p: OrchestrationPolicy): Promise<KnownVerificationMethod[]> {
  const sms = newSessionRecord(
    {
      requestId: 'r-1',
      phoneNumber: '+79123456789',
      method: 'sms',
      status: 'sent',
      cost: RUB(3),
    },
    { createdAt: NOW, ttlMs: 300_000, as: 'answer' },
  );
  const { priceOf } = await p.plan(OFFERED);
  return switchableMethods({
    journey: oneStepJourney(sms),
    status: 'sent',
    remaining: OFFERED.filter((m) => m !== 'sms'),
    priceMinor: priceOf,
    spentMinor: 300,
    maxSteps: p.maxSteps,
    maxCostMinor: p.maxCostMinor,
  });
}

/**
 * The journey's cost ceiling and the prices it is compared with are in one unit (kopecks): a ceiling
 * or a price read in roubles on one side only would let journeys spend past `maxCost` (or refuse all).
 */
describe('OrchestrationPolicy: the cost ceiling and the prices in one unit of money', () => {
  it('maxCost and the price list are both counted in kopecks', async () => {
    const p = policy({ orchestration: { maxCost: 3.5 } }, PRICES);
    expect(p.maxCostMinor).toBe(350);
    const { priceOf } = await p.plan(OFFERED);
    expect([priceOf('reverse_flash_call'), priceOf('flash_call'), priceOf('sms')]).toStrictEqual([
      25, 80, 300,
    ]);
  });

  it('a switch fits under the ceiling to the kopeck, and not one kopeck past it', async () => {
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 3.5 } }, PRICES))).toStrictEqual([
      'reverse_flash_call',
    ]);
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 3.8 } }, PRICES))).toStrictEqual([
      'reverse_flash_call',
      'flash_call',
    ]);
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 3.79 } }, PRICES))).toStrictEqual([
      'reverse_flash_call',
    ]);
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 3.24 } }, PRICES))).toStrictEqual([]);
  });

  it('while prices cannot be read, every method counts as the spend cap’s worst case, in kopecks too', async () => {
    // Default worst case 3 RUB: 3.00 spent + 3.00 > 5.99, but fits under 6.00.
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 5.99 } }, undefined))).toStrictEqual(
      [],
    );
    expect(await switchableAfterSms(policy({ orchestration: { maxCost: 6 } }, undefined))).toStrictEqual([
      'reverse_flash_call',
      'flash_call',
    ]);
    const { priceOf } = await policy(
      {
        orchestration: { maxCost: 6 },
        limits: { spendCap: { amount: 100, windowMs: 86_400_000, worstCasePrice: 1.5 } },
      },
      undefined,
    ).plan(OFFERED);
    expect(priceOf('flash_call')).toBe(150);
  });
});

describe('OrchestrationPolicy: a method whose completion dropped on the operator (issue 47)', () => {
  const step = { method: 'sms' as const, requestId: 'r-1' };
  const fixed = { orchestration: { fallback: false as const, timeoutSeconds: { sms: 60 } } };

  it('falls back at half its moment while degraded or demoted, never below the floor', async () => {
    expect(await policy(fixed, PRICES).fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(60_000);
    expect(await policy(fixed, PRICES, 'degraded').fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(
      30_000,
    );
    expect(await policy(fixed, PRICES, 'demoted').fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(
      30_000,
    );
    const floored = {
      orchestration: { fallback: { floorMs: 40_000, minSamples: 1_000 }, timeoutSeconds: { sms: 60 } },
    };
    expect(await policy(floored, PRICES, 'degraded').fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(
      40_000,
    );
    // A moment already below the floor (a short timeout) is never pushed later by a degradation.
    const short = { orchestration: { ...floored.orchestration, timeoutSeconds: { sms: 30 } } };
    expect(await policy(short, PRICES, 'degraded').fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(
      30_000,
    );
  });

  it("keeps the moment in mode 'price' and 'cost_per_success' (their orders alone)", async () => {
    const price = { orchestration: { ...fixed.orchestration, mode: 'price' as const } };
    expect(await policy(price, PRICES, 'degraded').fallbackAfterMs(step, '+79851234567', 'mobile')).toBe(
      60_000,
    );
  });

  it('tries a demoted method last in an auto start; the other modes keep their order', async () => {
    const flashDown = (method: string): HealthState => (method === 'flash_call' ? 'demoted' : 'healthy');
    const auto = policy({}, { prices: [...PRICES.prices].reverse() }, flashDown);
    // Price order: reverse call, flash call, SMS; the flash call demoted on +7 985 goes last.
    expect(await auto.startOrder(OFFERED, '+79851234567', 'mobile')).toStrictEqual([
      'reverse_flash_call',
      'sms',
      'flash_call',
    ]);
    const price = policy({ orchestration: { mode: 'price' } }, PRICES, flashDown);
    expect(await price.startOrder(OFFERED, '+79851234567', 'mobile')).toStrictEqual(OFFERED);
  });

  it("offers a demoted method last to an auto journey's switches too; the other modes and fixed methods keep their order", async () => {
    const flashDown = (method: string): HealthState => (method === 'flash_call' ? 'demoted' : 'healthy');
    expect(await policy({}, PRICES, flashDown).switchOrder(OFFERED, '+79851234567')).toStrictEqual([
      'reverse_flash_call',
      'sms',
      'flash_call',
    ]);
    const flashDegraded = (method: string): HealthState => (method === 'flash_call' ? 'degraded' : 'healthy');
    expect(await policy({}, PRICES, flashDegraded).switchOrder(OFFERED, '+79851234567')).toStrictEqual(
      OFFERED,
    );
    for (const orchestration of [
      { mode: 'price' as const },
      { mode: 'cost_per_success' as const },
      { methods: ['flash_call', 'sms'] as KnownVerificationMethod[] },
    ])
      expect(
        await policy({ orchestration }, PRICES, flashDown).switchOrder(OFFERED, '+79851234567'),
      ).toStrictEqual(OFFERED);
  });
});

describe('OrchestrationPolicy: a damped jump of the fallback moment reaches the host as an ops event (issue 47)', () => {
  it('emits verification.fallback_moment with the registration, once, when learned figures turn thin', async () => {
    let now = NOW;
    const resolved = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
      name: 'eu',
      orchestration: { fallback: { minSamples: 30 } },
    });
    // 40 verified reverse calls per device hint, all within 30 s; then 5: thin.
    let verified = 40;
    const stats = {
      timeToVerify: () =>
        Promise.resolve({ started: verified, ended: verified, left: 0, buckets: [0, 0, 0, verified] }),
    } as unknown as MethodStats;
    const emitter = new EventEmitter2();
    const events: unknown[] = [];
    emitter.on('verification.fallback_moment', (event: unknown) => events.push(event));
    const p = new OrchestrationPolicy(
      resolved,
      { latest: () => Promise.resolve(undefined), current: () => undefined } as unknown as PriceBook,
      telemetryOf(resolved, undefined, emitter),
      stats,
      { state: () => 'healthy' } as unknown as MethodHealthWatch,
    );
    const step = { method: 'reverse_flash_call', requestId: 'r-1' };
    const learned = await p.fallbackAfterMs(step, '+79123000001', 'desktop');
    expect(learned).toBeLessThan(30_000);
    verified = 5;
    for (let read = 0; read < 3; read++) {
      now += 30_000;
      expect(await p.fallbackAfterMs(step, '+79123000001', 'desktop')).toBeLessThan(45_000);
    }
    expect(events).toStrictEqual([
      expect.objectContaining({
        event: 'verification.fallback_moment',
        method: 'reverse_flash_call',
        device: 'desktop',
        figures: 'thin',
        adoptedMs: learned,
        targetMs: 45_000,
        registration: 'eu',
      }),
    ]);
  });
});
