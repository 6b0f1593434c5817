import { describe, expect, it } from '@jest/globals';
import type { KnownVerificationMethod, Prices } from '../api/api.types.js';
import type { VerificationApiClient } from '../api/verification-api.client.js';
import type { VerificationLogger } from '../observability/verification-logger.js';
import type { VerificationTelemetry } from '../observability/verification-telemetry.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { PriceBook } from './price-book.js';

/*
 * The methods offered to frontends (`GET /{prefix}/methods`, the start route's check): the host's
 * `methods` exactly, or the default methods the account's price list names.
 */

const DEFAULTS: KnownVerificationMethod[] = ['reverse_flash_call', 'flash_call', 'sms'];
const RUB = (amount: number) => ({ amount, currency: 'RUB' });

function book(methodsFromAccount: boolean) {
  const state = {
    prices: {
      prices: [
        { method: 'sms', price: RUB(3) },
        { method: 'flash_call', price: RUB(0.8) },
      ],
    } as Prices,
    fails: false,
    reads: 0,
    warnings: [] as string[],
  };
  const api = {
    getPrices: () => {
      state.reads += 1;
      return state.fails ? Promise.reject(new Error('down')) : Promise.resolve(state.prices);
    },
  } as unknown as VerificationApiClient;
  const logger = {
    warn: (message: string) => void state.warnings.push(message),
  } as unknown as VerificationLogger;
  const options = {
    pricesTtlMs: 600_000,
    clock: () => 1_700_000_000_000,
    methods: DEFAULTS,
    methodsFromAccount,
  } as unknown as ResolvedVerificationOptions;
  return Object.assign(state, { book: new PriceBook(options, api, { logger } as VerificationTelemetry) });
}

describe('PriceBook: the methods offered', () => {
  it('methods not given: every default before the first read, then those the list prices, in their order', async () => {
    const b = book(true);
    expect(b.book.offeredNow()).toStrictEqual(DEFAULTS);
    expect(b.reads).toBe(0);
    expect(await b.book.offered()).toStrictEqual(['flash_call', 'sms']);
    expect(b.book.offeredNow()).toStrictEqual(['flash_call', 'sms']);
    expect(b.warnings).toStrictEqual([]);
  });

  it('a list naming none of the defaults offers all of them, and says so once', async () => {
    const b = book(true);
    b.prices = { prices: [{ method: 'voice', price: RUB(2) }] };
    expect(await b.book.offered()).toStrictEqual(DEFAULTS);
    expect(b.book.offeredNow()).toStrictEqual(DEFAULTS);
    expect(b.warnings).toStrictEqual([
      'methods: the price list names none of the default methods; offering all of them',
    ]);
  });

  it('an empty list offers all of them too', async () => {
    const b = book(true);
    b.prices = { prices: [] };
    expect(await b.book.offered()).toStrictEqual(DEFAULTS);
  });

  it('no list ever read (the API down): every default', async () => {
    const b = book(true);
    b.fails = true;
    expect(await b.book.offered()).toStrictEqual(DEFAULTS);
  });

  it('methods given by the host: exactly those, whatever the list, without asking the API', async () => {
    const b = book(false);
    expect(await b.book.offered()).toStrictEqual(DEFAULTS);
    expect(b.reads).toBe(0);
    await b.book.fetch();
    expect(b.book.offeredNow()).toStrictEqual(DEFAULTS);
  });
});
