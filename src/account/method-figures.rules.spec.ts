import { describe, expect, it } from '@jest/globals';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { callingCodeOf, emptySums, figureCells, toFigures } from './method-figures.js';

/*
 * The method figures' rules as a reader meets them: the countries a query may name and what it is
 * told when it names none, the figures of nothing, what a figure cell counts, and calling codes.
 */

const fx = methodStatsSuite();
const { session } = fx;

describe('method figures: queries and their answers', () => {
  it('a country by a calling code of two or three digits, with or without `+`', async () => {
    await fx.stats.tally(session({ phoneNumber: '+447911123456' }));
    await fx.stats.tally(session({ phoneNumber: '+380501234567' }));
    await fx.stats.tally(session());
    for (const country of ['44', '+44', 'GB'])
      expect((await fx.stats.figures({ country })).sms!.started).toBe(1);
    for (const country of ['380', '+380', 'ua'])
      expect((await fx.stats.figures({ country })).sms!.started).toBe(1);
  });

  it('a bad window or country is refused saying what is allowed and what was given', async () => {
    await expect(fx.stats.figures({ days: 36 })).rejects.toThrow(
      'methodStats: "days" must be an integer from 1 to 35, got 36',
    );
    await expect(fx.stats.figures({ country: 'XX' })).rejects.toThrow(
      'methodStats: "country" must be a calling code ("7", "+7"), an ISO 3166 code ("RU") or "unknown", got "XX"',
    );
  });

  it('the figures of nothing: no rate, no median, no cost per verified user, nothing charged', () => {
    expect(toFigures(emptySums(), 'RUB')).toStrictEqual({
      started: 0,
      delivered: 0,
      verified: 0,
      expired: 0,
      failed: 0,
      callers: 0,
      verifiedRate: null,
      medianTimeToVerifyMs: null,
      charged: rub(0),
      costPerVerified: null,
    });
  });

  it('a figure cell counts what a start became, never its caller or its money', async () => {
    const record = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await fx.stats.tally(record, 'client:a', 'mobile');
    expect((await fx.stats.figures()).msgr1_otp).toMatchObject({ started: 1, callers: 1, charged: rub(0.9) });
    const cells = await fx.stats.cellSums('msgr1_otp', figureCells(record.phoneNumber, 'mobile'), 7);
    expect(
      cells.map(({ started, callers, chargedMinor }) => ({ started, callers, chargedMinor })),
    ).toStrictEqual(Array(5).fill({ started: 1, callers: 0, chargedMinor: 0 }));
  });

  it('a number’s calling code; a prefix other than `+` and three digits decides no other number’s', () => {
    expect(callingCodeOf('+79123456789')).toBe('7');
    expect(callingCodeOf('tel:+79123456789')).toBe('7');
    expect(callingCodeOf('tel:+447911123456')).toBe('44');
    expect(callingCodeOf(' +79123456789')).toBe('7');
    expect(callingCodeOf(' +380501234567')).toBe('380');
  });
});
