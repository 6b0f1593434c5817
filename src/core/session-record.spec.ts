import { describe, expect, it } from '@jest/globals';
import {
  awaitsCode,
  awaitsUnreportedChange,
  chargedCost,
  codeLengthRange,
  newSessionRecord,
  owesCodeRequired,
  restoredRecord,
  sameRecord,
  storedRecord,
  showsDelivery,
  type SessionFacts,
  type SessionRecord,
} from './session-record.js';
import { VERIFICATION_METHODS } from './verification-method.js';

const NOW = 1_700_000_000_000;

const answer: SessionFacts = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'operator_id',
  status: 'delivered',
  awaitingCode: true,
  codeLength: 6,
  numberToCall: '+78001234567',
  deepLink: 'https://t.me/bot?start=x',
  expiresAt: new Date(NOW + 120_000),
  cost: { amount: 1.5, currency: 'RUB' },
};

describe('newSessionRecord: the one way a session record is made', () => {
  it('keeps the start answer as it is, with the owner, the clock and no verification yet', () => {
    expect(
      newSessionRecord(answer, { owner: 'alice', createdAt: NOW, ttlMs: 300_000, as: 'answer' }),
    ).toStrictEqual({
      requestId: 'req-1',
      phoneNumber: '+79123456789',
      method: 'operator_id',
      owner: 'alice',
      status: 'delivered',
      awaitingCode: true,
      codeLength: 6,
      numberToCall: '+78001234567',
      deepLink: 'https://t.me/bot?start=x',
      createdAt: NOW,
      expiresAt: NOW + 120_000,
      verifiedAt: null,
      cost: { amount: 1.5, currency: 'RUB' },
      // The answer showed the delivery: what the on_delivery billing rule charges on.
      delivered: true,
    });
  });

  it('a code is awaited only when the API says true', () => {
    for (const awaitingCode of [false, undefined])
      expect(
        newSessionRecord({ ...answer, awaitingCode }, { createdAt: NOW, ttlMs: 0, as: 'answer' })
          .awaitingCode,
      ).toBe(false);
  });

  it('a session found later is recorded as it was at initiation (the tracker merges the rest in)', () => {
    const found = { ...answer, status: 'verified', awaitingCode: true, verifiedAt: new Date(NOW) };
    const seed = newSessionRecord(found, { owner: 'bob', createdAt: NOW, ttlMs: 300_000, as: 'seed' });
    expect(seed).toMatchObject({ status: 'sent', awaitingCode: false, verifiedAt: null, owner: 'bob' });
    expect(seed.cost).toStrictEqual(answer.cost);
  });

  it("the API's created_at and expires_at win; without them, the origin's time and TTL from creation", () => {
    const created = new Date(NOW - 60_000);
    const stated = newSessionRecord(
      { ...answer, createdAt: created },
      { createdAt: NOW, ttlMs: 1, as: 'seed' },
    );
    expect(stated).toMatchObject({ createdAt: NOW - 60_000, expiresAt: NOW + 120_000 });

    const noEnd = { ...answer, createdAt: created, expiresAt: undefined };
    expect(newSessionRecord(noEnd, { createdAt: NOW, ttlMs: 600_000, as: 'seed' })).toMatchObject({
      createdAt: NOW - 60_000,
      expiresAt: NOW - 60_000 + 600_000,
    });
    const nothing = { ...answer, expiresAt: undefined };
    expect(newSessionRecord(nothing, { createdAt: NOW, ttlMs: 300_000, as: 'answer' })).toMatchObject({
      createdAt: NOW,
      expiresAt: NOW + 300_000,
    });
  });
});

function record(fields: Partial<SessionRecord>): SessionRecord {
  return {
    ...newSessionRecord(
      { ...answer, awaitingCode: false, codeLength: undefined },
      { createdAt: NOW, ttlMs: 0, as: 'answer' },
    ),
    status: 'sent',
    ...fields,
  };
}

describe('the code field and the follow rules, read from the method traits', () => {
  it('shows a code field: never for reverse flash call, when the API says for msgr2_bot and operator_id, else always', () => {
    for (const method of VERIFICATION_METHODS)
      for (const awaitingCode of [false, true]) {
        const expected =
          method === 'reverse_flash_call'
            ? false
            : method === 'msgr2_bot' || method === 'operator_id'
              ? awaitingCode
              : true;
        expect([method, awaitingCode, awaitsCode(record({ method, awaitingCode }))]).toStrictEqual([
          method,
          awaitingCode,
          expected,
        ]);
      }
    expect(awaitsCode(record({ method: 'some_new_method' }))).toBe(true);
  });

  it('shows no code field once the session is final, whatever the method says', () => {
    for (const status of ['verified', 'expired', 'failed'])
      for (const method of [...VERIFICATION_METHODS, 'some_new_method'])
        expect(awaitsCode(record({ method, status, awaitingCode: true }))).toBe(false);
  });

  it("only msgr2_bot's pending code request goes unreported (no webhook announces it)", () => {
    expect(awaitsUnreportedChange(record({ method: 'msgr2_bot' }))).toBe(true);
    expect(awaitsUnreportedChange(record({ method: 'msgr2_bot', awaitingCode: true }))).toBe(false);
    expect(awaitsUnreportedChange(record({ method: 'msgr2_bot', status: 'expired' }))).toBe(false);
    for (const method of [...VERIFICATION_METHODS.filter((m) => m !== 'msgr2_bot'), 'some_new_method'])
      expect(awaitsUnreportedChange(record({ method }))).toBe(false);
  });

  it('owes code_required only for an announced code request that came (operator_id fallback)', () => {
    expect(owesCodeRequired(record({ method: 'operator_id', fallback: true }))).toBe(true);
    expect(owesCodeRequired(record({ method: 'operator_id' }))).toBe(false);
    expect(owesCodeRequired(record({ method: 'msgr2_bot', fallback: true }))).toBe(false);
    expect(owesCodeRequired(record({ method: 'some_new_method', fallback: true }))).toBe(false);
  });

  it('sizes the code field: exactly the length the API gave, else the spec bounds, nothing when no code is awaited', () => {
    expect(codeLengthRange(record({ method: 'sms', codeLength: 6 }))).toStrictEqual({
      codeLengthMin: 6,
      codeLengthMax: 6,
    });
    expect(codeLengthRange(record({ method: 'operator_id', awaitingCode: true }))).toStrictEqual({
      codeLengthMin: 4,
      codeLengthMax: 8,
    });
    expect(codeLengthRange(record({ method: 'operator_id' }))).toBeUndefined();
    expect(codeLengthRange(record({ method: 'reverse_flash_call', codeLength: 4 }))).toBeUndefined();
  });
});

describe('chargedCost: the money debited so far, by the billing rule of the method', () => {
  const cost = { amount: 3, currency: 'RUB' };
  const charged = (method: string, status: string, delivered?: boolean) =>
    chargedCost({ method, status, delivered, cost });

  it('reverse flash call: only once verified; an expired or failed one costs nothing', () => {
    expect(charged('reverse_flash_call', 'verified')).toStrictEqual(cost);
    for (const status of ['sent', 'delivered', 'expired', 'failed'])
      expect(charged('reverse_flash_call', status, true)).toBeUndefined();
  });

  it.each(['sms', 'flash_call', 'msgr2_bot', 'voice'])(
    '%s: once delivered, whatever came after; never when the code or call did not go out',
    (method) => {
      for (const status of ['delivered', 'verified', 'expired', 'failed'])
        expect(charged(method, status, true)).toStrictEqual(cost);
      for (const status of ['sent', 'expired', 'failed'])
        expect(charged(method, status, undefined)).toBeUndefined();
    },
  );

  it.each(['msgr1_otp', 'operator_id', 'a_method_this_version_does_not_know'])(
    '%s: at initiation, whatever became of the attempt',
    (method) => {
      for (const status of ['sent', 'expired', 'failed', 'verified'])
        expect(charged(method, status, undefined)).toStrictEqual(cost);
    },
  );

  it("nothing when the cost is unknown; a copy, never the record's own object", () => {
    expect(chargedCost({ method: 'msgr1_otp', status: 'verified', delivered: true })).toBeUndefined();
    const record = { method: 'sms', status: 'delivered', delivered: true, cost };
    const money = chargedCost(record)!;
    money.amount = 99;
    expect(record.cost.amount).toBe(3);
  });
});

describe('showsDelivery: what proves the code or call went out', () => {
  it('delivered for every method; verified only for a method whose user types a code', () => {
    for (const method of VERIFICATION_METHODS) expect(showsDelivery(method, 'delivered')).toBe(true);
    expect(showsDelivery('sms', 'verified')).toBe(true);
    expect(showsDelivery('operator_id', 'verified')).toBe(true);
    expect(showsDelivery('reverse_flash_call', 'verified')).toBe(false);
    for (const status of ['sent', 'expired', 'failed']) expect(showsDelivery('sms', status)).toBe(false);
  });

  it('a start answer already delivered is recorded delivered; a seed never is (the tracker merges that in)', () => {
    const sent = newSessionRecord({ ...answer, status: 'sent' }, { createdAt: NOW, ttlMs: 0, as: 'answer' });
    expect(sent.delivered).toBeUndefined();
    expect('delivered' in sent).toBe(false);
    const seed = newSessionRecord(answer, { createdAt: NOW, ttlMs: 0, as: 'seed' });
    expect(seed.delivered).toBeUndefined();
  });
});

describe('sameRecord: whether an observation changed a record', () => {
  const record: SessionRecord = newSessionRecord(answer, { createdAt: NOW, ttlMs: 300_000, as: 'answer' });
  const stored = (r: SessionRecord): SessionRecord => JSON.parse(JSON.stringify(r)) as SessionRecord;

  it('the same facts, whatever the field order and whether an absent field is undefined or left out', () => {
    expect(record.owner).toBeUndefined();
    expect(Object.keys(record)).toContain('owner');
    expect(sameRecord(record, stored(record))).toBe(true);
    expect(sameRecord(stored(record), record)).toBe(true);
    const reordered = Object.fromEntries(Object.entries(record).reverse()) as unknown as SessionRecord;
    expect(sameRecord(reordered, record)).toBe(true);
    expect(sameRecord({ ...record, cost: { amount: 1.5, currency: 'RUB' } }, record)).toBe(true);
  });

  it('any field changed, added or removed is a change, the cost by amount and by currency', () => {
    expect(sameRecord({ ...record, status: 'verified' }, record)).toBe(false);
    expect(sameRecord({ ...record, verifiedAt: NOW }, record)).toBe(false);
    expect(record.delivered).toBe(true);
    expect(sameRecord({ ...record, delivered: undefined }, record)).toBe(false);
    expect(sameRecord({ ...record, journeyId: 'req-0' }, record)).toBe(false);
    expect(sameRecord(record, { ...record, fallback: true })).toBe(false);
    expect(sameRecord({ ...record, awaitingCode: false }, record)).toBe(false);
    expect(sameRecord({ ...record, cost: { amount: 2, currency: 'RUB' } }, record)).toBe(false);
    expect(sameRecord({ ...record, cost: { amount: 1.5, currency: 'KZT' } }, record)).toBe(false);
    expect(sameRecord({ ...record, cost: undefined }, record)).toBe(false);
    expect(sameRecord(record, { ...record, cost: undefined })).toBe(false);
    const { codeLength: _dropped, ...withoutLength } = record;
    expect(sameRecord(withoutLength as SessionRecord, record)).toBe(false);
  });
});

describe('storedRecord / restoredRecord: a record as the store keeps it', () => {
  const whole: SessionRecord = {
    requestId: 'req-9',
    phoneNumber: 'sealed-number',
    method: 'sms',
    owner: 'sealed-owner',
    purpose: 'login',
    assessment: { decision: 'grade', reason: 'risky', challengePassed: true },
    status: 'verified',
    awaitingCode: true,
    codeLength: 4,
    numberToCall: '+78001234567',
    deepLink: 'https://t.me/bot?start=x',
    createdAt: NOW,
    expiresAt: NOW + 299_999,
    verifiedAt: NOW + 1_000,
    cost: { amount: 1.5, currency: 'RUB' },
    fallback: true,
    delivered: true,
    journeyId: 'req-8',
    suspected: true,
    rebuilt: true,
  };
  const roundTrip = (r: SessionRecord, idInKey: boolean): SessionRecord =>
    restoredRecord(
      JSON.parse(JSON.stringify(storedRecord(r, idInKey))) as Record<string, unknown>,
      r.requestId,
    );

  it('every field reads back as it was, with the id in the key or in the record', () => {
    expect(roundTrip(whole, true)).toStrictEqual(whole);
    expect(roundTrip(whole, false)).toStrictEqual(whole);
    const pending = newSessionRecord(answer, { createdAt: NOW, ttlMs: 300_000, as: 'answer' });
    expect(roundTrip(pending, true)).toEqual(pending);
    // Read under another id, a record holding its own keeps it (a spare test slot's).
    const own = storedRecord(whole, false);
    expect(restoredRecord(own, 'slot-1').requestId).toBe('req-9');
  });

  it("one letter a field, the end after the creation, the cost as a pair: a pending session's record is short", () => {
    const pending: SessionRecord = {
      requestId: 'f5463e59-9cc5-40a9-9597-03f759c45a27',
      phoneNumber: 'v1.ysrucYypliLTsrL50DPkELxdATvjsmeCa96-uDIBW0kDTmEnhoBunA',
      method: 'sms',
      status: 'sent',
      awaitingCode: false,
      codeLength: 6,
      createdAt: 1_796_015_984_794,
      expiresAt: 1_796_016_584_793,
      verifiedAt: null,
      cost: { amount: 3, currency: 'RUB' },
    };
    expect(storedRecord(pending, true)).toStrictEqual({
      p: pending.phoneNumber,
      m: 'sms',
      s: 'sent',
      l: 6,
      c: 1_796_015_984_794,
      e: 599_999,
      q: [3, 'RUB'],
    });
    // 210 characters with the fields' long names, the end as a time and the cost as an object.
    expect(JSON.stringify(storedRecord(pending, true))).toHaveLength(135);
  });

  it('a record stored with long names (an older version) reads as it was', () => {
    const { requestId: _id, awaitingCode: _w, verifiedAt: _v, ...older } = whole;
    expect(
      restoredRecord(
        JSON.parse(JSON.stringify({ ...older, awaitingCode: true, verifiedAt: NOW + 1_000 })),
        'req-9',
      ),
    ).toStrictEqual(whole);
    const pending = {
      phoneNumber: 'x',
      method: 'sms',
      status: 'sent',
      createdAt: NOW,
      expiresAt: NOW + 5,
      cost: { amount: 3, currency: 'RUB' },
    };
    expect(restoredRecord(pending, 'req-1')).toStrictEqual({
      ...pending,
      requestId: 'req-1',
      awaitingCode: false,
      verifiedAt: null,
    });
  });
});
