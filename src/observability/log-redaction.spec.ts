import { describe, expect, it } from '@jest/globals';
import { LogRedactor, shortenId } from './log-redaction.js';

const API_KEY = 'pk_test_0001';
const API_SECRET = 'sk_test_abcdef0123456789';
const WEBHOOK_SECRET = 'whsec_' + Buffer.from('a webhook signing key, 32 bytes!').toString('base64');

describe('LogRedactor', () => {
  const redactor = new LogRedactor({
    maskPhoneNumbers: true,
    secrets: [API_SECRET, WEBHOOK_SECRET],
    credentials: { apiKey: API_KEY, apiSecret: API_SECRET },
  });

  it('masks phone fields and shortens id fields', () => {
    expect(
      redactor.line('start', {
        phone: '+79123454567',
        request_id: '0f8c2d9e-1b2c-4d5e-8f90-123456789abc',
        verification_id: 'AYTxKj0ys61Tu0977_NJY-YPE',
        method: 'sms',
        attempts: 2,
        coalesced: false,
        owner: null,
        skipped: undefined,
      }),
    ).toBe(
      'start phone=+7******4567 request_id=0f8c2d9e… verification_id=AYTxKj0y… method=sms attempts=2 coalesced=false owner=null',
    );
  });

  it('quotes values with spaces, quotes or line breaks, so one event stays one line', () => {
    expect(redactor.line('x', { route: 'POST /v1/verify', method: 'sms\nfake=line', empty: '' })).toBe(
      'x route="POST /v1/verify" method="sms\\nfake=line" empty=""',
    );
  });

  it('removes secrets, Basic headers and webhook secrets wherever they appear', () => {
    const basic = Buffer.from(`${API_KEY}:${API_SECRET}`).toString('base64');
    const line = redactor.line(`failed with ${API_SECRET}`, {
      header: `Authorization: Basic ${basic}`,
      other: 'Basic dXNlcjpwYXNzd29yZA==',
      hook: WEBHOOK_SECRET,
      key: WEBHOOK_SECRET.slice(6),
      another: 'whsec_c29tZW9uZSBlbHNlcyBzZWNyZXQ=',
    });
    for (const secret of [
      API_SECRET,
      basic,
      WEBHOOK_SECRET,
      WEBHOOK_SECRET.slice(6),
      'dXNlcjpwYXNzd29yZA==',
      'c29tZW9uZSBlbHNl',
    ])
      expect(line).not.toContain(secret);
    expect(line).toContain('[redacted]');
  });

  it('masks E.164 numbers and shortens UUIDs inside free text', () => {
    expect(
      redactor.scrub('session 0f8c2d9e-1b2c-4d5e-8f90-123456789abc of +79123454567 (and +442071838750)'),
    ).toBe('session 0f8c2d9e… of +7******4567 (and +4*******8750)');
  });

  it("masks the shortest E.164 numbers in free text too: Niue's 7 digits, the Faroe Islands' 9", () => {
    expect(redactor.line('the API refused +6834002 and +298123456', { phone: '+298123456' })).toBe(
      'the API refused +6**4002 and +2****3456 phone=+2****3456',
    );
  });

  it('leaves phone numbers in the clear when masking is off, but still removes secrets', () => {
    const clear = new LogRedactor({ maskPhoneNumbers: false, secrets: [API_SECRET] });
    expect(clear.line(`x ${API_SECRET}`, { phone: '+79123454567' })).toBe('x [redacted] phone=+79123454567');
  });

  it('does not treat very short strings as secrets', () => {
    const r = new LogRedactor({ maskPhoneNumbers: true, secrets: ['abc'] });
    expect(r.line('abc route')).toBe('abc route');
  });
});

describe('shortenId', () => {
  it('keeps eight characters', () => {
    expect(shortenId('0f8c2d9e-1b2c')).toBe('0f8c2d9e…');
    expect(shortenId('short')).toBe('short');
  });
});

describe('LogRedactor: the bounds and each kind of field', () => {
  it('every phone and id field, by name; null written as null', () => {
    const r = new LogRedactor({ maskPhoneNumbers: true, secrets: [] });
    const id = '0f8c2d9e-1b2c';
    expect(
      r.line('x', {
        phone: '+79123454567',
        phone_number: '+79123454568',
        request_id: id,
        verification_id: id,
        handle: id,
        webhook_id: id,
        other_id: 'abcdefghijk',
        owner: null,
      }),
    ).toBe(
      'x phone=+7******4567 phone_number=+7******4568 request_id=0f8c2d9e… verification_id=0f8c2d9e… handle=0f8c2d9e… webhook_id=0f8c2d9e… other_id=abcdefghijk owner=null',
    );
    // A phone field's value that is no E.164 number is masked all the same.
    const national = r.line('x', { phone: '89123454567', phone_number: '89123454568' });
    expect([national.includes('89123454567'), national.includes('89123454568')]).toStrictEqual([
      false,
      false,
    ]);
  });

  it('an id of eight characters is kept whole; of nine, cut to eight', () => {
    expect(shortenId('12345678')).toBe('12345678');
    expect(shortenId('123456789')).toBe('12345678…');
  });

  it('a secret of six characters is removed; the longer of two overlapping secrets is removed whole', () => {
    const r = new LogRedactor({ maskPhoneNumbers: true, secrets: ['abcdef', 'abcdef-and-more', 'abcde'] });
    expect(r.line('abcdef abcdef-and-more abcde')).toBe('[redacted] [redacted] abcde');
  });

  it('a Basic header with any run of spaces is removed whole, and what follows the secret is kept', () => {
    const r = new LogRedactor({ maskPhoneNumbers: true, secrets: [] });
    expect(r.scrub('Authorization: Basic   dXNlcjpwYXNz, next')).toBe(
      'Authorization: Basic [redacted], next',
    );
    expect(r.scrub('basic abc')).toBe('basic abc');
    expect(r.scrub('hook whsec_c29tZQ== end')).toBe('hook whsec_[redacted] end');
  });

  it('only a secret that starts with whsec_ is also removed without its prefix', () => {
    const r = new LogRedactor({
      maskPhoneNumbers: true,
      secrets: ['plain-secret-0123456', 'whsec_c2lnbmluZ2tleQ=='],
    });
    expect(r.scrub('c2lnbmluZ2tleQ== secret-0123456')).toBe('[redacted] secret-0123456');
  });

  it('the Basic value of the API credentials is removed even where no header names it', () => {
    const r = new LogRedactor({
      maskPhoneNumbers: true,
      secrets: [],
      credentials: { apiKey: 'pk_1', apiSecret: 'sk_2' },
    });
    const basic = Buffer.from('pk_1:sk_2', 'utf8').toString('base64');
    expect(r.scrub(`token=${basic}`)).toBe('token=[redacted]');
    // Credentials whose Basic value holds `+` and `/` (base64, not base64url).
    const symbols = new LogRedactor({
      maskPhoneNumbers: true,
      secrets: [],
      credentials: { apiKey: 'k~~~', apiSecret: 's???' },
    });
    expect(symbols.scrub('token=a35+fjpzPz8/')).toBe('token=[redacted]');
  });
});
