import { describe, expect, it } from '@jest/globals';
import type { Prices } from '../api/api.types.js';
import { toPriceList } from '../account/price-book.js';
import { PriceEstimator } from './price-estimator.js';

/** An estimator over a price list the test changes (the price book's cache and pause are its own: price-book.spec.ts). */
function estimator(options: { worstCaseMinor?: number } = {}) {
  const state = {
    prices: { prices: [{ method: 'sms', price: { amount: 3.5, currency: 'RUB' } }] } as Prices,
  };
  const book = {
    latest: async () => {
      return toPriceList(state.prices);
    },
  };
  const prices = new PriceEstimator(book, options.worstCaseMinor ?? 5000);
  return { prices, state };
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
    const { prices } = estimator({ worstCaseMinor: 5000 });
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

  it('without any price list read, estimates by the worst case (or the highest learned cost)', async () => {
    const prices = new PriceEstimator({ latest: async () => undefined }, 300);
    expect(await prices.estimateMinor('sms')).toBe(300);
    prices.learn('voice', { amount: 7.25, currency: 'RUB' });
    expect(await prices.estimateMinor('sms')).toBe(725);
  });
});
