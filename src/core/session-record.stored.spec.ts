import { describe, expect, it } from '@jest/globals';
import {
  newSessionRecord,
  restoredRecord,
  storedRecord,
  type SessionFacts,
  type SessionRecord,
} from './session-record.js';

const NOW = 1_700_000_000_000;

const answer: SessionFacts = {
  requestId: 'req-1',
  phoneNumber: '+79123456789',
  method: 'sms',
  status: 'sent',
  codeLength: 6,
};

describe('newSessionRecord: what the module knows beyond the API’s word', () => {
  it('keeps the purpose, the host’s assessment (a copy), the journey, a suspected and a rebuilt start', () => {
    const assessment = { decision: 'grade' as const, reason: 'risky', challengePassed: true as const };
    const record = newSessionRecord(answer, {
      owner: 'alice',
      purpose: 'login',
      assessment,
      journeyId: 'req-0',
      suspected: true,
      rebuilt: true,
      createdAt: NOW,
      ttlMs: 300_000,
      as: 'answer',
    });
    expect(record).toMatchObject({
      purpose: 'login',
      assessment: { decision: 'grade', reason: 'risky', challengePassed: true },
      journeyId: 'req-0',
      suspected: true,
      rebuilt: true,
    });
    assessment.reason = 'changed later';
    expect(record.assessment?.reason).toBe('risky');
  });

  it('holds none of them when the origin has none: a first step, not suspected, not rebuilt', () => {
    for (const origin of [{}, { suspected: false, rebuilt: false }]) {
      const record = newSessionRecord(answer, { ...origin, createdAt: NOW, ttlMs: 300_000, as: 'answer' });
      for (const key of ['purpose', 'assessment', 'journeyId', 'suspected', 'rebuilt'])
        expect([key, key in record]).toStrictEqual([key, false]);
    }
  });
});

describe('storedRecord: the stored form other instances and the next version read', () => {
  const whole: SessionRecord = {
    requestId: 'req-9',
    phoneNumber: 'sealed-number',
    method: 'operator_id',
    owner: 'sealed-owner',
    purpose: 'login',
    assessment: { decision: 'allow', reason: 'known-device' },
    status: 'verified',
    awaitingCode: true,
    codeLength: 4,
    numberToCall: '+78001234567',
    deepLink: 'https://t.me/bot?start=x',
    createdAt: NOW,
    expiresAt: NOW + 300_000,
    verifiedAt: NOW + 1_000,
    cost: { amount: 1.5, currency: 'RUB' },
    fallback: true,
    delivered: true,
    journeyId: 'req-8',
    suspected: true,
    rebuilt: true,
  };
  const STORED = {
    i: 'req-9',
    p: 'sealed-number',
    m: 'operator_id',
    o: 'sealed-owner',
    u: 'login',
    a: { decision: 'allow', reason: 'known-device' },
    s: 'verified',
    w: true,
    l: 4,
    n: '+78001234567',
    k: 'https://t.me/bot?start=x',
    c: NOW,
    e: 300_000,
    v: NOW + 1_000,
    q: [1.5, 'RUB'],
    f: true,
    d: true,
    j: 'req-8',
    x: true,
    r: true,
  };

  it('each field under its one letter', () => {
    expect(storedRecord(whole, false)).toStrictEqual(STORED);
    const { i: _id, ...keyed } = STORED;
    expect(storedRecord(whole, true)).toStrictEqual(keyed);
  });

  it('a record stored in that form reads back whole', () => {
    expect(restoredRecord(structuredClone(STORED), 'slot-3')).toStrictEqual(whole);
  });

  it('a record whose cost is unknown (rebuilt without it) is stored without one and reads back so', () => {
    const unpriced = newSessionRecord(answer, { createdAt: NOW, ttlMs: 300_000, as: 'seed', rebuilt: true });
    expect(unpriced.cost).toBeUndefined();
    const stored = JSON.parse(JSON.stringify(storedRecord(unpriced, true))) as Record<string, unknown>;
    expect(stored).toStrictEqual({
      p: '+79123456789',
      m: 'sms',
      s: 'sent',
      l: 6,
      c: NOW,
      e: 300_000,
      r: true,
    });
    const read = restoredRecord(stored, 'req-1');
    expect(read).toEqual(unpriced);
    expect(read.cost).toBeUndefined();
  });
});
