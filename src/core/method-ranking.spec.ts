import { describe, expect, it } from '@jest/globals';
import { rankByCostPerSuccess, rankByPrice, splitDemoted, type MethodPriceEntry } from './method-ranking.js';

const rub = (amount: number) => ({ amount, currency: 'RUB' });
/** The spec's indicative prices. */
const PRICES: MethodPriceEntry[] = [
  { method: 'sms', price: rub(3) },
  { method: 'reverse_flash_call', price: rub(0.25) },
  { method: 'flash_call', price: rub(0.8) },
  { method: 'msgr1_otp', price: rub(0.9) },
  { method: 'operator_id', price: rub(2) },
];
const ALL = ['sms', 'operator_id', 'msgr1_otp', 'flash_call', 'reverse_flash_call'] as const;

describe('rankByPrice: cheapest first', () => {
  it('orders by the current price', () => {
    expect(rankByPrice(ALL, PRICES)).toStrictEqual([
      'reverse_flash_call',
      'flash_call',
      'msgr1_otp',
      'operator_id',
      'sms',
    ]);
  });

  it('puts unpriced methods last and keeps the given order for them and for ties', () => {
    const prices = [...PRICES, { method: 'msgr2_bot', price: rub(0.8) }];
    expect(rankByPrice(['voice', 'msgr2_bot', 'sms', 'flash_call', 'msgr2_bot_x'], prices)).toStrictEqual([
      'msgr2_bot',
      'flash_call',
      'sms',
      'voice',
      'msgr2_bot_x',
    ]);
    expect(rankByPrice(['flash_call', 'msgr2_bot'], prices)).toStrictEqual(['flash_call', 'msgr2_bot']);
  });

  it('does not change the list it was given', () => {
    const methods = ['sms', 'flash_call'];
    rankByPrice(methods, PRICES);
    expect(methods).toStrictEqual(['sms', 'flash_call']);
  });
});

describe('rankByCostPerSuccess: price ÷ success rate once sampled', () => {
  it('is the price order while no candidate has enough samples', () => {
    const stats = { sms: { started: 49, verified: 49 }, reverse_flash_call: { started: 10, verified: 0 } };
    expect(rankByCostPerSuccess(ALL, PRICES, stats, 50)).toStrictEqual(rankByPrice(ALL, PRICES));
    expect(rankByCostPerSuccess(ALL, PRICES, {}, 0)).toStrictEqual(rankByPrice(ALL, PRICES));
  });

  it('orders sampled methods by price ÷ verified rate: a cheap method that seldom verifies falls behind', () => {
    const stats = {
      reverse_flash_call: { started: 100, verified: 5 }, // 0.25 / 0.05 = 5.00 per verified user
      flash_call: { started: 100, verified: 40 }, // 0.80 / 0.40 = 2.00
      sms: { started: 100, verified: 90 }, // 3.00 / 0.90 = 3.33
    };
    expect(
      rankByCostPerSuccess(['sms', 'flash_call', 'reverse_flash_call'], PRICES, stats, 50),
    ).toStrictEqual(['flash_call', 'sms', 'reverse_flash_call']);
  });

  it('ranks a method not sampled yet at its price ÷ the pooled rate of the sampled ones', () => {
    const stats = {
      // Pooled: (50 + 10) / (100 + 100) = 0.3.
      sms: { started: 100, verified: 50 }, // 3.00 / 0.5 = 6.00
      flash_call: { started: 100, verified: 10 }, // 0.80 / 0.1 = 8.00
      operator_id: { started: 3, verified: 3 }, // not sampled: 2.00 / 0.3 = 6.67, its own 100 % ignored
      msgr1_otp: { started: 0, verified: 0 }, // not sampled: 0.90 / 0.3 = 3.00
    };
    expect(
      rankByCostPerSuccess(['sms', 'flash_call', 'operator_id', 'msgr1_otp'], PRICES, stats, 50),
    ).toStrictEqual(['msgr1_otp', 'sms', 'operator_id', 'flash_call']);
  });

  it('puts a sampled method that never verified after the others, and unpriced methods last', () => {
    const stats = {
      reverse_flash_call: { started: 60, verified: 0 },
      sms: { started: 60, verified: 30 },
      voice: { started: 100, verified: 100 },
    };
    expect(rankByCostPerSuccess(['voice', 'reverse_flash_call', 'sms'], PRICES, stats, 50)).toStrictEqual([
      'sms',
      'reverse_flash_call',
      'voice',
    ]);
  });

  it('when every sampled method never verified, everything costs without bound: price order', () => {
    const stats = { sms: { started: 60, verified: 0 }, flash_call: { started: 60, verified: 0 } };
    expect(rankByCostPerSuccess(['sms', 'msgr1_otp', 'flash_call'], PRICES, stats, 50)).toStrictEqual([
      'flash_call',
      'msgr1_otp',
      'sms',
    ]);
  });

  it('counts a method as sampled from exactly minSamples starts, and never with none', () => {
    const at = (started: number) =>
      rankByCostPerSuccess(
        ['flash_call', 'sms'],
        PRICES,
        { flash_call: { started, verified: 0 }, sms: { started: 50, verified: 50 } },
        50,
      );
    // flash_call below the threshold competes at 0.80 / pooled 1.0 (sms alone): ahead of sms at 3.00.
    expect(at(49)).toStrictEqual(['flash_call', 'sms']);
    // Sampled at 50 with no verification: behind sms.
    expect(at(50)).toStrictEqual(['sms', 'flash_call']);
    expect(
      rankByCostPerSuccess(['sms', 'flash_call'], PRICES, { sms: { started: 0, verified: 0 } }, 0),
    ).toStrictEqual(['flash_call', 'sms']);
  });

  it('refuses a minSamples that is not a non-negative integer', () => {
    for (const bad of [-1, 1.5, Number.NaN])
      expect(() => rankByCostPerSuccess(['sms'], PRICES, {}, bad)).toThrow(RangeError);
  });
});

describe('rankByCostPerSuccess: a rate is trusted only from minCallers distinct callers (issue 29, finding 6)', () => {
  const methods = ['reverse_flash_call', 'sms'] as const;
  const prices: MethodPriceEntry[] = [
    { method: 'reverse_flash_call', price: rub(0.25) },
    { method: 'sms', price: rub(3) },
  ];

  it('abandoned starts from a few callers do not move auto from the reverse flash call to SMS', () => {
    const stats = {
      // 728 abandoned starts from 3 callers sank its rate to 1 %.
      reverse_flash_call: { started: 758, verified: 8, callers: 3 },
      sms: { started: 100, verified: 90, callers: 100 },
    };
    expect(rankByCostPerSuccess(methods, prices, stats, 50)).toStrictEqual(['sms', 'reverse_flash_call']);
    expect(rankByCostPerSuccess(methods, prices, stats, 50, 20)).toStrictEqual(['reverse_flash_call', 'sms']);
    // From enough callers, the rate is trusted.
    const many = { ...stats, reverse_flash_call: { ...stats.reverse_flash_call, callers: 20 } };
    expect(rankByCostPerSuccess(methods, prices, many, 50, 20)).toStrictEqual(['sms', 'reverse_flash_call']);
  });
});

describe('method ranking: the prices read and the error a host reads', () => {
  it('a method priced twice keeps its first price; a price that is not a finite number is passed over', () => {
    const twice = [
      { method: 'sms', price: rub(3) },
      { method: 'sms', price: rub(0.1) },
      { method: 'flash_call', price: rub(0.8) },
    ];
    expect(rankByPrice(['sms', 'flash_call'], twice)).toStrictEqual(['flash_call', 'sms']);
    const notANumber = [
      { method: 'sms', price: rub(Number.NaN) },
      { method: 'flash_call', price: rub(0.8) },
      { method: 'sms', price: rub(0.1) },
    ];
    expect(rankByPrice(['sms', 'flash_call', 'voice'], notANumber)).toStrictEqual([
      'sms',
      'flash_call',
      'voice',
    ]);
    expect(rankByPrice(['sms', 'flash_call'], notANumber.slice(0, 2))).toStrictEqual(['flash_call', 'sms']);
  });

  it('a free method that never verified still comes after one that does', () => {
    const prices = [
      { method: 'reverse_flash_call', price: rub(0) },
      { method: 'sms', price: rub(3) },
    ];
    const stats = { reverse_flash_call: { started: 10, verified: 0 }, sms: { started: 10, verified: 5 } };
    expect(rankByCostPerSuccess(['reverse_flash_call', 'sms'], prices, stats, 1)).toStrictEqual([
      'sms',
      'reverse_flash_call',
    ]);
  });

  it('names the wrong minSamples in its error', () => {
    expect(() => rankByCostPerSuccess(['sms'], PRICES, {}, -1)).toThrow(
      'minSamples must be a non-negative integer, got -1',
    );
  });
});

describe('splitDemoted', () => {
  it('keeps each part in the order given: the methods not demoted, then the demoted ones', () => {
    const order = ['reverse_flash_call', 'sms', 'flash_call', 'msgr1_otp'];
    expect(splitDemoted(order, (i) => i === 0 || i === 2)).toEqual([
      ['sms', 'msgr1_otp'],
      ['reverse_flash_call', 'flash_call'],
    ]);
    expect(splitDemoted(order, () => false)).toEqual([order, []]);
    expect(splitDemoted(order, () => true)).toEqual([[], order]);
  });
});
