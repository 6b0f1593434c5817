import { describe, expect, it } from '@jest/globals';
import type { Prices } from '../api/api.types.js';
import type { VerificationApiClient } from '../api/verification-api.client.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { VerificationTelemetry } from '../observability/verification-telemetry.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { PriceBook } from './price-book.js';

const TTL_MS = 600_000;

/** A book over an API whose price list the test changes, on a clock the test moves. */
function book(ttlMs = TTL_MS) {
  const clock = { now: 1_700_000_000_000 };
  const state = {
    prices: { prices: [{ method: 'sms', price: { amount: 3.5, currency: 'RUB' } }] } as Prices,
    fails: undefined as unknown,
    reads: 0,
    warnings: [] as { message: string; context: unknown }[],
  };
  const api = {
    getPrices: async () => {
      state.reads++;
      if (state.fails !== undefined) throw state.fails;
      return state.prices;
    },
  } as unknown as VerificationApiClient;
  const logger = {
    warn: (message: string, context?: unknown) => void state.warnings.push({ message, context }),
  } as unknown as VerificationLogger;
  const prices = new PriceBook(
    { pricesTtlMs: ttlMs, clock: () => clock.now } as ResolvedVerificationOptions,
    api,
    { logger } as VerificationTelemetry,
  );
  return { prices, clock, state };
}

describe('PriceBook', () => {
  it('reads the list again only once it is older than its TTL, and one read serves concurrent callers', async () => {
    const { prices, clock, state } = book();
    expect(prices.current()).toBeUndefined();
    const lists = await Promise.all([prices.latest(), prices.fetch(), prices.latest()]);
    expect(state.reads).toBe(1);
    expect(lists[0]?.minorByMethod.get('sms')).toBe(350);
    expect(new Set(lists).size).toBe(1);
    state.prices = { prices: [{ method: 'sms', price: { amount: 4, currency: 'RUB' } }] };
    clock.now += TTL_MS - 1;
    expect(prices.current()).toBe(lists[0]);
    expect((await prices.latest())?.minorByMethod.get('sms')).toBe(350);
    expect(state.reads).toBe(1);
    clock.now += 1;
    expect(prices.current()).toBeUndefined();
    expect(prices.last()).toBe(lists[0]);
    expect((await prices.latest())?.minorByMethod.get('sms')).toBe(400);
    expect(state.reads).toBe(2);
  });

  it('leaves out amounts that are not money', async () => {
    const { prices, state } = book();
    state.prices = {
      prices: [
        { method: 'sms', price: { amount: 'free' as never, currency: 'RUB' } },
        { method: 'voice', price: { amount: 4, currency: 'RUB' } },
      ],
    };
    const list = await prices.latest();
    expect([...(list?.minorByMethod ?? [])]).toStrictEqual([['voice', 400]]);
    expect(list?.prices).toBe(state.prices);
  });

  it('after a failed read keeps the last list, warns once, and asks again only after 30 s (nor past the TTL)', async () => {
    const { prices, clock, state } = book();
    const first = await prices.latest();
    state.fails = new TypeError('socket hang up');
    clock.now += TTL_MS;
    expect(await prices.latest()).toBe(first);
    expect(state.reads).toBe(2);
    expect(state.warnings).toStrictEqual([
      {
        message: 'prices could not be read; the last list read stands until they can',
        context: { age_ms: TTL_MS, error: 'TypeError: socket hang up' },
      },
    ]);
    clock.now += 29_999;
    expect(await prices.latest()).toBe(first);
    expect(state.reads).toBe(2);
    // The host's own read asks even during the pause, and is served the last list when it fails (the pause starts again).
    expect(await prices.fetch()).toBe(first);
    expect(state.reads).toBe(3);
    clock.now += 29_999;
    expect(await prices.latest()).toBe(first);
    expect(state.reads).toBe(3);
    state.fails = undefined;
    state.prices = { prices: [{ method: 'sms', price: { amount: 4, currency: 'RUB' } }] };
    clock.now += 1;
    expect((await prices.latest())?.minorByMethod.get('sms')).toBe(400);
    expect(state.reads).toBe(4);
    expect(state.warnings).toHaveLength(2);
  });

  it('with no list ever read: the module decides without one, the host’s read rejects; a short TTL bounds the pause', async () => {
    const { prices, clock, state } = book(5000);
    state.fails = 'secret-bearing text';
    expect(await prices.latest()).toBeUndefined();
    await expect(prices.fetch()).rejects.toBe('secret-bearing text');
    // A thrown value that is not an Error is logged by its type only.
    expect(state.warnings.map((w) => w.context)).toStrictEqual([
      { age_ms: null, error: 'string' },
      { age_ms: null, error: 'string' },
    ]);
    clock.now += 4999;
    await prices.latest();
    expect(state.reads).toBe(2);
    clock.now += 1;
    await prices.latest();
    expect(state.reads).toBe(3);
  });
});
