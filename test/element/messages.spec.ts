import { describe, expect, it } from '@jest/globals';
import { ROUTE_ERROR_CODES } from '../../src/http/verification.problems.js';
import { errorKey, MESSAGES, type TextKey } from '../../src/element/messages.js';
import { formatPhone, phoneDigits } from '../../src/element/phone-format.js';
import { attemptsLine, refusalText } from '../../src/element/refusal-text.js';
import { VerificationClientError } from '../../src/client/errors.js';

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
    ['+7', '+7'],
    ['8', '+7'],
    ['912', '+7 912'],
    ['9123', '+7 912 3'],
    ['+1 202 555 0143', '+12025550143'],
    ['+7******6789', '+7******6789'],
    ['', ''],
    ['79123456789', '+7 912 345-67-89'],
    ['912 345 67 87', '+7 912 345-67-87'],
    [' +375 29 123 45 67', '+375291234567'],
    ['+7 912 345 6', '+7 912 345-6'],
    ['+7 912 345', '+7 912 345'],
    ['+7 912 345 67', '+7 912 345-67'],
    ['+7 912 345 678', '+7 912 345-67-8'],
    ['+1 202 555 0143 12345 678', '+120255501431234'],
  ])('%s → %s (RU)', (typed, shown) => {
    expect(formatPhone(typed, 'RU')).toBe(shown);
  });

  it('reads a national number in the given country', () => {
    expect(phoneDigits('29 123 45 67', 'BY')).toBe('375291234567');
    expect(phoneDigits('+375 29 123 45 67', 'RU')).toBe('375291234567');
    expect(phoneDigits('8 701 234 56 78', 'KZ')).toBe('77012345678');
    // +7 written without + is kept as typed wherever it is read: reading `7 473…` (Voronezh) as a Kazakh
    // national number would send a valid +7 747… to someone else (attack-q).
    for (const typed of ['7 473 123-45-67', '7 (495) 123-45-67', '73432123456', '7 701 234 56 78'])
      expect(phoneDigits(formatPhone(typed, 'KZ'), 'KZ')).toBe(typed.replace(/\D/g, ''));
    expect(phoneDigits('88 123 45 67', 'UZ')).toBe('998881234567');
    expect(phoneDigits('77 123456', 'AM')).toBe('37477123456');
    expect(phoneDigits('700 123 456', 'kg')).toBe('996700123456');
    expect(phoneDigits('8 912 345 67 89', 'US')).toBe('89123456789');
  });
});

describe('the count of attempts left is said once', () => {
  const say = {
    t: (key: TextKey, values: Record<string, string | number> = {}) =>
      (MESSAGES.en[key as keyof (typeof MESSAGES)['en']] ?? key).replace(/\{(\w+)\}/g, (_, name: string) =>
        String(values[name]),
      ),
    attempts: (n: number) => `${n} attempts left`,
  };
  const count = (text: string) => text.split('2 attempts left').length - 1;

  it('a wrong code: the message says it, the line under the field does not', () => {
    const wrong = new VerificationClientError('invalid_code', 400, { attempts_remaining: 2 });
    expect(count(refusalText(wrong, null, say)) + count(attemptsLine(2, wrong, say))).toBe(1);
    expect(attemptsLine(2, wrong, say)).toBe('');
  });

  // The rule over every shape of refusal: the message and the line together say the count exactly once.
  it.each([
    ['invalid_code', 400, { attempts_remaining: 2 }],
    ['invalid_code', 400, {}],
    ['too_many_wrong_codes', 429, { attempts_remaining: 2 }],
    ['rate_limit_exceeded', 429, { attempts_remaining: 2 }],
    ['not_pending', 409, { verification_status: 'failed' }],
  ] as const)('%s %i %j on screen: the count is said once', (code, status, problem) => {
    const error = new VerificationClientError(code, status, problem);
    expect(count(refusalText(error, null, say)) + count(attemptsLine(2, error, say))).toBe(1);
  });

  it('no refusal that says it (none, or another one): the line says it', () => {
    expect(attemptsLine(2, null, say)).toBe('2 attempts left');
    const other = new VerificationClientError('rate_limit_exceeded', 429, {});
    expect(attemptsLine(2, other, say)).toBe('2 attempts left');
    expect(attemptsLine(null, null, say)).toBe('');
  });
});

describe('what the element says of a refused start, by whose fault it is', () => {
  const PAGE = {
    en: 'This page cannot send the request. Please reload it.',
    ru: 'Страница не может отправить запрос. Обновите её.',
  };
  const REFUSED = {
    en: 'We cannot start a verification for this request now. Please try later.',
    ru: 'Сейчас нельзя начать проверку. Попробуйте позже.',
  };
  const translator = (lang: 'en' | 'ru') => ({
    t: (key: TextKey, values: Record<string, string | number> = {}) =>
      (MESSAGES[lang][key] ?? '').replace(/\{(\w+)\}/g, (_, name: string) => String(values[name])),
    attempts: (n: number) => String(n),
  });

  // A purpose the page asked for that the host does not allow is the page's fault (reload); a step-up the
  // host's assessStart asks is a refused start (the host's own challenge is the page's to show).
  it.each([
    ['purpose_not_allowed', 400, PAGE],
    ['cross_site_request', 403, PAGE],
    ['step_up_required', 403, REFUSED],
    ['start_refused', 403, REFUSED],
  ] as const)('%s (%i): the words of its kind, in English and Russian', (code, status, words) => {
    const error = new VerificationClientError(code, status, { reason: 'unspecified' });
    for (const lang of ['en', 'ru'] as const)
      expect([lang, refusalText(error, null, translator(lang))]).toEqual([lang, words[lang]]);
  });
});
