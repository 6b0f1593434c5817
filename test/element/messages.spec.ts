import { describe, expect, it } from '@jest/globals';
import { ROUTE_ERROR_CODES } from '../../src/http/verification.problems.js';
import { errorKey, MESSAGES, type TextKey } from '../../src/element/messages.js';
import { formatPhone, phoneDigits } from '../../src/element/phone-format.js';

/** The client's own codes (src/client/errors.ts), beside the routes'. */
const CLIENT_CODES = ['network_error', 'unexpected_response', 'no_verification', 'resend_unavailable'];
const ROUTE_CODES = [...new Set(Object.values(ROUTE_ERROR_CODES).flat())];

describe('element messages', () => {
  it.each(['en', 'ru'] as const)(
    '%s: every error_code the routes (or the client) answer has its words',
    (lang) => {
      for (const code of [...ROUTE_CODES, ...CLIENT_CODES]) {
        const key = errorKey(code);
        expect([code, key]).not.toEqual([code, 'e_other']);
        expect([code, MESSAGES[lang][key]]).toEqual([code, expect.stringMatching(/\S/)]);
      }
    },
  );

  it('a code this version does not know still gets words, with the code', () => {
    expect(errorKey('something_new')).toBe('e_other');
    expect(MESSAGES.en.e_other).toContain('{code}');
  });

  it('Russian has every English text, and the plural forms Russian needs', () => {
    const english = Object.keys(MESSAGES.en) as TextKey[];
    expect(english.filter((key) => !MESSAGES.ru[key])).toEqual([]);
    for (const form of ['one', 'few', 'many'] as const)
      expect(MESSAGES.ru[`attempts_${form}`]).toContain('{n}');
  });
});

describe('element phone formatting', () => {
  it.each([
    ['9123456789', '+7 912 345-67-89'],
    ['89123456789', '+7 912 345-67-89'],
    ['+7 912 345 6789', '+7 912 345-67-89'],
    ['912', '+7 912'],
    ['9123', '+7 912 3'],
    ['+1 202 555 0143', '+12025550143'],
    ['+7******6789', '+7******6789'],
    ['', ''],
  ])('%s → %s (RU)', (typed, shown) => {
    expect(formatPhone(typed, 'RU')).toBe(shown);
  });

  it('reads a national number in the given country', () => {
    expect(phoneDigits('29 123 45 67', 'BY')).toBe('375291234567');
    expect(phoneDigits('+375 29 123 45 67', 'RU')).toBe('375291234567');
  });
});
