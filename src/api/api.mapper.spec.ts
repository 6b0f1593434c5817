import { describe, expect, it } from '@jest/globals';
import {
  parseDate,
  toBalance,
  toCheckResult,
  toInitiateResult,
  toPrices,
  toUsageParams,
  toUsageSummary,
  toVerificationSession,
} from './api.mapper.js';
import { isKnownInitiateResult } from './method-names.js';
import { WireFormatError } from './wire-format.error.js';

const RID = '3f2c7d9e-8a41-4c55-9b1e-0d6a2f4e7b10';
const common = {
  request_id: RID,
  phone_number: '+79123456789',
  status: 'sent',
  cost: { amount: 3, currency: 'RUB' },
  expires_at: '2026-10-01T12:05:00Z',
};

describe('dates', () => {
  it('parses ISO date-times and turns anything else into undefined', () => {
    expect(parseDate('2026-10-01T12:05:00Z')?.toISOString()).toBe('2026-10-01T12:05:00.000Z');
    expect(parseDate('not a date')).toBeUndefined();
    expect(parseDate('')).toBeUndefined();
    expect(parseDate(12345)).toBeUndefined();
    expect(parseDate(null)).toBeUndefined();
  });
});

describe('initiate result', () => {
  it('maps each method to its variant with its extra fields', () => {
    const rfc = toInitiateResult({
      ...common,
      method: 'reverse_flash_call',
      number_to_call: '+74950000000',
      code_length: 4,
    });
    expect(rfc).toStrictEqual({
      method: 'reverse_flash_call',
      requestId: RID,
      phoneNumber: '+79123456789',
      status: 'sent',
      cost: { amount: 3, currency: 'RUB' },
      expiresAt: new Date('2026-10-01T12:05:00Z'),
      codeLength: 4,
      numberToCall: '+74950000000',
    });
    const bot = toInitiateResult({
      ...common,
      method: 'msgr2_bot',
      deep_link: 'https://m.example/bot?start=t',
      code_length: 6,
    });
    expect(isKnownInitiateResult(bot) && bot.method === 'msgr2_bot' && bot.deepLink).toBe(
      'https://m.example/bot?start=t',
    );
    const op = toInitiateResult({ ...common, method: 'operator_id', awaiting_code: false });
    expect(isKnownInitiateResult(op) && op.method === 'operator_id' && op.awaitingCode).toBe(false);
    const sms = toInitiateResult({ ...common, method: 'sms', code_length: 6 });
    expect(sms).toMatchObject({ method: 'sms', codeLength: 6 });
    expect(sms).not.toHaveProperty('raw');
  });

  it('refuses an answer whose link or number to call may not be shown to a user, naming the field, not the value', () => {
    const bot = (deep_link: unknown) => () => toInitiateResult({ ...common, method: 'msgr2_bot', deep_link });
    expect(bot('javascript:alert(1)')).toThrow(
      new WireFormatError('initiate response: "deep_link" is not what may be shown to a user'),
    );
    expect(bot('http://m.example/bot')).toThrow(WireFormatError);
    expect(bot(7)).toThrow(WireFormatError);
    expect(bot(undefined)()).toMatchObject({ deepLink: undefined });
    const rfc = (number_to_call: unknown) => () =>
      toInitiateResult({ ...common, method: 'reverse_flash_call', number_to_call });
    expect(rfc('84950000000')).toThrow(WireFormatError);
    expect(rfc('+7495000000<')).toThrow(WireFormatError);
    expect(rfc(null)()).toMatchObject({ numberToCall: undefined });
  });

  it('normalises the msgr1 discriminator to msgr1_otp', () => {
    expect(toInitiateResult({ ...common, method: 'msgr1', code_length: 5 })).toMatchObject({
      method: 'msgr1_otp',
      codeLength: 5,
    });
  });

  it('passes an unknown method through with the raw wire object', () => {
    const wire = { ...common, method: 'carrier_pigeon', feather_colour: 'grey' };
    const result = toInitiateResult(wire);
    expect(result.method).toBe('carrier_pigeon');
    expect('raw' in result && result.raw).toStrictEqual(wire);
    expect(isKnownInitiateResult(result)).toBe(false);
    expect(isKnownInitiateResult(toInitiateResult({ ...common, method: 'msgr1' }))).toBe(true);
  });

  it('keeps an unknown status and degrades bad optional fields instead of crashing', () => {
    const result = toInitiateResult({
      ...common,
      method: 'sms',
      status: 'queued_on_the_moon',
      expires_at: 'tomorrow-ish',
      cost: { amount: 'lots' },
      code_length: 'six',
    });
    expect(result.status).toBe('queued_on_the_moon');
    expect(result.expiresAt).toBeUndefined();
    expect(result.cost).toBeUndefined();
    expect(result.codeLength).toBeUndefined();
  });

  it('accepts a decimal amount serialised as a string and keeps the currency', () => {
    expect(
      toInitiateResult({ ...common, method: 'sms', cost: { amount: '0.25', currency: 'RUB' } }).cost,
    ).toStrictEqual({
      amount: 0.25,
      currency: 'RUB',
    });
  });

  it('rejects a body without its identity fields with a WireFormatError naming the field', () => {
    expect(() => toInitiateResult({ ...common })).toThrow(
      new WireFormatError('initiate response: missing "method"'),
    );
    expect(() => toInitiateResult({ method: 'sms', phone_number: '+79123456789', status: 'sent' })).toThrow(
      /missing "request_id"/,
    );
    expect(() => toInitiateResult('garbage')).toThrow(WireFormatError);
    expect(() => toInitiateResult([common])).toThrow(WireFormatError);
  });
});

describe('session and check', () => {
  it('maps a session with parsed dates and normalised method', () => {
    const session = toVerificationSession({
      ...common,
      method: 'msgr1',
      status: 'verified',
      created_at: '2026-10-01T12:00:00Z',
      verified_at: '2026-10-01T12:01:00Z',
      awaiting_code: false,
    });
    expect(session).toStrictEqual({
      requestId: RID,
      phoneNumber: '+79123456789',
      method: 'msgr1_otp',
      status: 'verified',
      cost: { amount: 3, currency: 'RUB' },
      createdAt: new Date('2026-10-01T12:00:00Z'),
      verifiedAt: new Date('2026-10-01T12:01:00Z'),
      expiresAt: new Date('2026-10-01T12:05:00Z'),
      awaitingCode: false,
    });
  });

  it('gives verifiedAt null when absent, null or invalid', () => {
    expect(toVerificationSession({ ...common, method: 'sms' }).verifiedAt).toBeNull();
    expect(toVerificationSession({ ...common, method: 'sms', verified_at: null }).verifiedAt).toBeNull();
    expect(toVerificationSession({ ...common, method: 'sms', verified_at: 'soon' }).verifiedAt).toBeNull();
  });

  it('maps a check result and rejects one without a status', () => {
    expect(toCheckResult({ request_id: RID, status: 'verified', phone_number: '+79123456789' })).toEqual({
      requestId: RID,
      status: 'verified',
      phoneNumber: '+79123456789',
    });
    expect(() => toCheckResult({ request_id: RID, phone_number: '+79123456789' })).toThrow(
      'check response: missing "status"',
    );
  });
});

describe('balance and usage', () => {
  it('keeps Money as amount and currency', () => {
    expect(toBalance({ balance: { amount: 99.75, currency: 'RUB' } })).toStrictEqual({
      balance: { amount: 99.75, currency: 'RUB' },
    });
    expect(() => toBalance({})).toThrow(new WireFormatError('balance response: missing "balance"'));
  });

  it('normalises by_method keys, summing msgr1 and msgr1_otp, and drops invalid counts and days', () => {
    const usage = toUsageSummary({
      from: '2026-09-01',
      to: '2026-09-30',
      total_verifications: 10,
      successful: 7,
      success_rate: 0.7,
      total_cost: { amount: 12.5, currency: 'RUB' },
      by_method: { msgr1: 3, msgr1_otp: 1, sms: 6, voice: 'n/a' },
      by_status: { verified: 7, expired: 2, failed: 1 },
      daily: [{ date: '2026-09-02', total: 10, verified: 7 }, { total: 1 }, 'junk'],
    });
    expect(usage).toStrictEqual({
      from: '2026-09-01',
      to: '2026-09-30',
      totalVerifications: 10,
      successful: 7,
      successRate: 0.7,
      totalCost: { amount: 12.5, currency: 'RUB' },
      byMethod: { msgr1_otp: 4, sms: 6 },
      byStatus: { verified: 7, expired: 2, failed: 1 },
      daily: [{ date: '2026-09-02', total: 10, verified: 7 }],
    });
  });

  it('derives a missing success rate rounded to 4 places', () => {
    expect(toUsageSummary({ total_verifications: 3, successful: 2 }).successRate).toBe(0.6667);
    expect(toUsageSummary({}).successRate).toBe(0);
  });

  it('sends Dates as their UTC date and strings as given', () => {
    expect(toUsageParams({ from: new Date('2026-09-01T23:30:00-02:00'), to: '2026-09-30' })).toEqual({
      from: '2026-09-02',
      to: '2026-09-30',
    });
    expect(toUsageParams(undefined)).toStrictEqual({});
    expect(() => toUsageParams({ from: new Date('nope') })).toThrow(RangeError);
  });
});

describe('prices (shape "not shown")', () => {
  const expected = {
    prices: [
      { method: 'sms', price: { amount: 3, currency: 'RUB' } },
      { method: 'msgr1_otp', price: { amount: 0.9, currency: 'RUB' } },
    ],
  };

  it('accepts a list of { method, price: Money } under prices', () => {
    expect(
      toPrices({
        currency: 'RUB',
        prices: [
          { method: 'sms', price: { amount: 3, currency: 'RUB' } },
          { method: 'msgr1', price: { amount: 0.9, currency: 'RUB' } },
        ],
      }),
    ).toStrictEqual(expected);
  });

  it('accepts a top-level list of { method, amount, currency }', () => {
    expect(
      toPrices([
        { method: 'sms', amount: 3, currency: 'RUB' },
        { method: 'msgr1_otp', amount: '0.90' },
      ]),
    ).toStrictEqual(expected);
  });

  it('accepts a map of Money or bare numbers, at the top level or under prices', () => {
    expect(toPrices({ sms: { amount: 3, currency: 'RUB' }, msgr1: 0.9 })).toStrictEqual(expected);
    expect(toPrices({ currency: 'RUB', prices: { sms: 3, msgr1_otp: { amount: 0.9 } } })).toStrictEqual(
      expected,
    );
  });

  it('takes the document currency for bare amounts and skips nonsense entries', () => {
    expect(
      toPrices({
        currency: 'USD',
        prices: [
          { method: 'sms', price: 1 },
          { method: '' },
          { method: '', amount: 2 },
          { price: 2 },
          7,
          { method: 'flash_call', price: 'x' },
        ],
      }),
    ).toStrictEqual({ prices: [{ method: 'sms', price: { amount: 1, currency: 'USD' } }] });
    expect(() => toPrices('cheap')).toThrow(
      new WireFormatError('prices response: expected a list or a map of prices'),
    );
  });
});

describe('what the mapper refuses and what it degrades, field by field', () => {
  it.each([
    ['null', null],
    ['a list', [common]],
    ['a string', JSON.stringify(common)],
  ])('a body that is %s is not an object, for every answer', (_name, body) => {
    const readers = {
      initiate: toInitiateResult,
      check: toCheckResult,
      balance: toBalance,
      usage: toUsageSummary,
    };
    for (const [what, read] of Object.entries(readers))
      expect(() => read(body)).toThrow(`${what} response: expected a JSON object`);
    expect(() => toVerificationSession(body)).toThrow('session: expected a JSON object');
  });

  it('an empty identity field is missing, as an absent one is', () => {
    expect(() => toVerificationSession({ ...common, method: 'sms', request_id: '' })).toThrow(
      'session: missing "request_id"',
    );
  });

  it('numbers: a blank string is no amount; a code length must be a whole number; a flag must be a boolean', () => {
    const result = toInitiateResult({
      ...common,
      method: 'operator_id',
      cost: { amount: '  ' },
      code_length: '6.5',
      awaiting_code: 'true',
    });
    expect(result).toMatchObject({ cost: undefined, codeLength: undefined, awaitingCode: undefined });
    expect(
      toInitiateResult({ ...common, method: 'sms', code_length: '6', cost: { amount: '2' } }),
    ).toMatchObject({
      codeLength: 6,
      cost: { amount: 2, currency: 'RUB' },
    });
  });

  it('usage: an invalid Date is refused before the call; a bare document reads as an empty range in RUB', () => {
    expect(() => toUsageParams({ from: new Date(Number.NaN) })).toThrow(
      'getUsage: "from" is an invalid Date',
    );
    expect(toUsageSummary({ daily: 'none' })).toStrictEqual({
      from: '',
      to: '',
      totalVerifications: 0,
      successful: 0,
      successRate: 0,
      totalCost: { amount: 0, currency: 'RUB' },
      byMethod: {},
      byStatus: {},
      daily: [],
    });
  });

  it("prices: a top-level map's currency is the document's; a currency not a string is absent", () => {
    expect(toUsageSummary({ from: 20260901, to: { day: 30 } })).toMatchObject({ from: '', to: '' });
    expect(toPrices({ currency: 840, prices: [{ method: 'sms', price: 2 }] })).toStrictEqual({
      prices: [{ method: 'sms', price: { amount: 2, currency: 'RUB' } }],
    });
    expect(toPrices({ currency: 'USD', sms: 2, voice: 'x' })).toStrictEqual({
      prices: [{ method: 'sms', price: { amount: 2, currency: 'USD' } }],
    });
    expect(toPrices({ prices: { sms: { amount: 1 } } })).toStrictEqual({
      prices: [{ method: 'sms', price: { amount: 1, currency: 'RUB' } }],
    });
  });
});
