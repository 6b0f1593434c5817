import { describe, expect, it } from '@jest/globals';
import type { Prices } from '../api/api.types.js';
import { PriceEstimator } from './price-estimator.js';

const TTL_MS = 600_000;

/** An estimator over a price list the test changes, on a clock the test moves. */
function estimator(options: { worstCaseMinor?: number; ttlMs?: number } = {}) {
  const clock = { now: 1_700_000_000_000 };
  const state = {
    prices: { prices: [{ method: 'sms', price: { amount: 3.5, currency: 'RUB' } }] } as Prices,
    fails: false,
    reads: 0,
    warnings: [] as { message: string; context: unknown }[],
  };
  const prices = new PriceEstimator(
    async () => {
      state.reads++;
      if (state.fails) throw new TypeError('socket hang up');
      return state.prices;
    },
    options.ttlMs ?? TTL_MS,
    () => clock.now,
    {
      warn: (message: string, context?: unknown) => void state.warnings.push({ message, context }),
      error: () => undefined,
    } as never,
    options.worstCaseMinor ?? 5000,
  );
  return { prices, clock, state };
}

describe('PriceEstimator', () => {
  it('estimates a listed method by its price in kopecks, and never below 1 (a free method still counts)', async () => {
    const { prices } = estimator();
    expect(await prices.estimateMinor('sms')).toBe(350);
    const free = estimator();
    free.state.prices = { prices: [{ method: 'sms', price: { amount: 0, currency: 'RUB' } }] };
    expect(await free.prices.estimateMinor('sms')).toBe(1);
  });

  it('estimates a method missing from the list by the worst case, or the highest known price when higher', async () => {
    const { prices, state } = estimator({ worstCaseMinor: 5000 });
    expect(await prices.estimateMinor('voice')).toBe(5000);
    const higher = estimator({ worstCaseMinor: 100 });
    higher.state.prices = {
      prices: [
        { method: 'sms', price: { amount: 3.5, currency: 'RUB' } },
        { method: 'flash_call', price: { amount: 12, currency: 'RUB' } },
      ],
    };
    expect(await higher.prices.estimateMinor('voice')).toBe(1200);
    const none = estimator({ worstCaseMinor: 0 });
    none.state.prices = { prices: [] };
    expect(await none.prices.estimateMinor('voice')).toBe(1);
    expect(state.reads).toBe(1);
  });

  it('a method missing from the list is estimated by the last real cost seen for it', async () => {
    const { prices } = estimator({ worstCaseMinor: 5000 });
    prices.learn('voice', { amount: 7.25, currency: 'RUB' });
    expect(await prices.estimateMinor('voice')).toBe(725);
    prices.learn('voice', { amount: Number.NaN, currency: 'RUB' });
    prices.learn('voice', { amount: -1, currency: 'RUB' });
    expect(await prices.estimateMinor('voice')).toBe(725);
    // The list's own price wins over a learned cost.
    prices.learn('sms', { amount: 9, currency: 'RUB' });
    expect(await prices.estimateMinor('sms')).toBe(350);
  });

  it('skips amounts the list cannot count in kopecks', async () => {
    const { prices, state } = estimator({ worstCaseMinor: 200 });
    state.prices = {
      prices: [
        { method: 'sms', price: { amount: 'free' as never, currency: 'RUB' } },
        { method: 'voice', price: { amount: 4, currency: 'RUB' } },
      ],
    };
    // sms is not listed after all: the highest known price (voice's) is above the worst case.
    expect(await prices.estimateMinor('sms')).toBe(400);
  });

  it('reads the list again only once it is older than its TTL, and one read serves concurrent callers', async () => {
    const { prices, clock, state } = estimator();
    await Promise.all([
      prices.estimateMinor('sms'),
      prices.estimateMinor('sms'),
      prices.estimateMinor('sms'),
    ]);
    expect(state.reads).toBe(1);
    state.prices = { prices: [{ method: 'sms', price: { amount: 4, currency: 'RUB' } }] };
    clock.now += TTL_MS - 1;
    expect(await prices.estimateMinor('sms')).toBe(350);
    expect(state.reads).toBe(1);
    clock.now += 1;
    expect(await prices.estimateMinor('sms')).toBe(400);
    expect(state.reads).toBe(2);
  });

  it('when the list cannot be read, keeps the last one and does not ask again for 30 s (nor past the TTL)', async () => {
    const { prices, clock, state } = estimator();
    expect(await prices.estimateMinor('sms')).toBe(350);
    state.fails = true;
    clock.now += TTL_MS;
    expect(await prices.estimateMinor('sms')).toBe(350);
    expect(state.reads).toBe(2);
    expect(state.warnings).toEqual([
      {
        message: 'spend cap: prices could not be read; using the last known estimates',
        context: { error: 'TypeError: socket hang up' },
      },
    ]);
    clock.now += 29_999;
    expect(await prices.estimateMinor('sms')).toBe(350);
    expect(state.reads).toBe(2);
    state.fails = false;
    state.prices = { prices: [{ method: 'sms', price: { amount: 4, currency: 'RUB' } }] };
    clock.now += 1;
    expect(await prices.estimateMinor('sms')).toBe(400);
    expect(state.reads).toBe(3);

    // A TTL shorter than 30 s bounds the pause instead.
    const short = estimator({ ttlMs: 5000 });
    short.state.fails = true;
    expect(await short.prices.estimateMinor('sms')).toBe(5000);
    short.clock.now += 4999;
    await short.prices.estimateMinor('sms');
    expect(short.state.reads).toBe(1);
    short.clock.now += 1;
    await short.prices.estimateMinor('sms');
    expect(short.state.reads).toBe(2);
  });

  it('a failure that is not an Error is still logged without its content', async () => {
    const clock = { now: 0 };
    const warnings: unknown[] = [];
    const prices = new PriceEstimator(
      () => Promise.reject('secret-bearing text'),
      TTL_MS,
      () => clock.now,
      {
        warn: (_m: string, context?: unknown) => void warnings.push(context),
        error: () => undefined,
      } as never,
      300,
    );
    expect(await prices.estimateMinor('sms')).toBe(300);
    expect(warnings).toEqual([{ error: 'string' }]);
  });
});
