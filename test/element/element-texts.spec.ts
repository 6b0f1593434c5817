import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { VerificationClientError } from '../../src/client/errors.js';
import { ElementTexts } from '../../src/element/element-texts.js';
import { duration } from '../../src/element/messages.js';
import { refusalText } from '../../src/element/refusal-text.js';

/**
 * What the element says, without a browser: its language (the nearest `lang`, the page's, the browser's),
 * the host's replacements (`setTexts`), plural forms, method names, the countdowns' `m:ss` and the words of
 * each refusal, as a user reads them.
 */

/** A page as the element sees it: the `lang` of its nearest tagged ancestor, the page's, the browser's. */
function page(nearest: string | null, html = '', browserLanguage?: string): HTMLElement {
  const g = globalThis as unknown as Record<string, unknown>;
  g.document = { documentElement: { lang: html } };
  Object.defineProperty(globalThis, 'navigator', {
    value: browserLanguage === undefined ? {} : { language: browserLanguage },
    configurable: true,
    writable: true,
  });
  return {
    closest: (selector: string) =>
      selector === '[lang]' && nearest !== null
        ? { getAttribute: (name: string) => (name === 'lang' ? nearest : null) }
        : null,
  } as unknown as HTMLElement;
}

describe('the language the element speaks', () => {
  const saved = Object.getOwnPropertyDescriptor(globalThis, 'navigator');
  beforeEach(() => {
    delete (globalThis as unknown as Record<string, unknown>).document;
  });
  afterEach(() => {
    delete (globalThis as unknown as Record<string, unknown>).document;
    if (saved) Object.defineProperty(globalThis, 'navigator', saved);
    else delete (globalThis as unknown as Record<string, unknown>).navigator;
  });

  it.each([
    ['its nearest `lang` (ru-RU)', ['ru-RU', 'en', 'en-US'], 'Номер телефона'],
    ["its nearest `lang` (en) over the page's ru", ['en', 'ru', 'ru'], 'Phone number'],
    ["the page's `lang` when no ancestor has one", [null, 'ru', 'en-US'], 'Номер телефона'],
    ["the browser's language when the page says none", [null, '', 'ru-KZ'], 'Номер телефона'],
    ['English when nothing says', [null, '', undefined], 'Phone number'],
    ['English for a language it has no texts in', ['de', 'ru', 'ru'], 'Phone number'],
  ] as const)('%s', (_case, [nearest, html, browserLanguage], label) => {
    expect(new ElementTexts(page(nearest, html, browserLanguage)).t('phone')).toBe(label);
  });

  it('the plural forms of its language: "1 attempt left", "3 попытки", "5 попыток", "21 попытка"', () => {
    const en = new ElementTexts(page('en'));
    expect([1, 2, 0].map((n) => en.attempts(n))).toEqual([
      '1 attempt left',
      '2 attempts left',
      '0 attempts left',
    ]);
    const ru = new ElementTexts(page('ru'));
    expect([1, 3, 5, 21, 0].map((n) => ru.attempts(n))).toEqual([
      'Осталась 1 попытка',
      'Осталось 3 попытки',
      'Осталось 5 попыток',
      'Осталась 21 попытка',
      'Осталось 0 попыток',
    ]);
  });

  it("a method's name, or its own code when no text names it (a newer server's method)", () => {
    const say = new ElementTexts(page('en'));
    expect(say.methodName('sms')).toBe('SMS code');
    expect(say.methodName('carrier_pigeon')).toBe('carrier_pigeon');
    expect(say.methodName(null)).toBe('');
    expect(new ElementTexts(page('ru')).methodName('flash_call')).toBe('Звонок-сброс');
  });
});

describe("the host's own texts (setTexts)", () => {
  afterEach(() => {
    delete (globalThis as unknown as Record<string, unknown>).document;
  });

  it('for one language: shown in it only, the other keeps the defaults', () => {
    const host = { lang: 'ru' };
    const el = { closest: () => ({ getAttribute: () => host.lang }) } as unknown as HTMLElement;
    const texts = new ElementTexts(el);
    texts.replace({ start: 'Дальше', m_sms: 'СМС' }, 'ru');
    expect([texts.t('start'), texts.methodName('sms'), texts.t('check')]).toEqual([
      'Дальше',
      'СМС',
      'Подтвердить',
    ]);
    expect(texts.replaced()).toEqual({ start: 'Дальше', m_sms: 'СМС' });
    host.lang = 'en';
    expect([texts.t('start'), texts.methodName('sms')]).toEqual(['Continue', 'SMS code']);
    expect(texts.replaced()).toEqual({});
  });

  it('for both languages at once, and a second call adds to the first', () => {
    const host = { lang: 'en' };
    const el = { closest: () => ({ getAttribute: () => host.lang }) } as unknown as HTMLElement;
    const texts = new ElementTexts(el);
    texts.replace({ start: 'Go' });
    texts.replace({ cancel: 'Stop' });
    expect([texts.t('start'), texts.t('cancel')]).toEqual(['Go', 'Stop']);
    host.lang = 'ru';
    expect([texts.t('start'), texts.t('cancel')]).toEqual(['Go', 'Stop']);
    expect(texts.replaced()).toEqual({ start: 'Go', cancel: 'Stop' });
  });

  it('`{name}`s are filled in, every one; a value not given reads as nothing', () => {
    const el = { closest: () => ({ getAttribute: () => 'en' }) } as unknown as HTMLElement;
    const texts = new ElementTexts(el);
    texts.replace({ expires: '{t} left ({t})', switched: 'Now: {method}{missing}.' });
    expect(texts.t('expires', { t: '0:05' })).toBe('0:05 left (0:05)');
    expect(texts.t('switched', { method: 'SMS' })).toBe('Now: SMS.');
    expect(texts.t('codeRange', { min: 4, max: 8 })).toBe('Enter the code (4 to 8 digits)');
  });
});

describe('the countdowns read m:ss, rounded up to the next whole second', () => {
  it.each([
    [0, '0:00'],
    [1, '0:01'],
    [999, '0:01'],
    [1000, '0:01'],
    [1001, '0:02'],
    [9000, '0:09'],
    [10_000, '0:10'],
    [59_000, '0:59'],
    [59_001, '1:00'],
    [60_000, '1:00'],
    [61_000, '1:01'],
    [119_000, '1:59'],
    [600_000, '10:00'],
  ])('%i ms → %s', (ms, shown) => {
    expect(duration(ms)).toBe(shown);
  });
});

describe('the words of each refusal, in English', () => {
  const el = { closest: () => ({ getAttribute: () => 'en' }) } as unknown as HTMLElement;
  const say = new ElementTexts(el);
  const refused = (code: string, status: number, problem: Record<string, unknown> = {}) =>
    new VerificationClientError(code, status, problem);

  it.each([
    ['invalid_code', 400, { attempts_remaining: 1 }, null, 'That code is not right. 1 attempt left.'],
    ['invalid_code', 400, { attempts_remaining: 0 }, null, 'That code is not right. 0 attempts left.'],
    ['invalid_code', 400, {}, null, 'That code is not right.'],
    [
      'not_pending',
      409,
      { verification_status: 'expired' },
      null,
      'This verification has expired. Please start again.',
    ],
    ['not_pending', 409, { verification_status: 'verified' }, null, 'This number is already verified.'],
    [
      'not_pending',
      409,
      { verification_status: 'failed' },
      null,
      'This verification has failed. Please start again.',
    ],
    ['not_pending', 409, { verification_status: 'canceled' }, null, 'This verification is already over.'],
    ['not_pending', 409, {}, null, 'This verification is already over.'],
    ['rate_limit_exceeded', 429, {}, 61_000, 'Too many attempts. Please try again in 1:01.'],
    [
      'rate_limit_exceeded',
      429,
      { reason: 'resend_cooldown' },
      5000,
      'We just sent something to this number. You can ask again in 0:05.',
    ],
    [
      'rate_limit_exceeded',
      429,
      { reason: 'resend_cooldown' },
      null,
      'Too many attempts. Please try again later.',
    ],
    ['rate_limit_exceeded', 429, {}, 0, 'Too many attempts. Please try again later.'],
    [
      'phone_not_allowed',
      403,
      { reason: 'number_type' },
      null,
      'Only mobile numbers can be verified. Please enter a mobile number.',
    ],
    [
      'phone_not_allowed',
      403,
      { reason: 'country' },
      null,
      'This number cannot be verified here. Please use another one.',
    ],
    [
      'validation_error',
      400,
      {
        errors: [
          { field: 'code', message: 'x' },
          { field: 'phone_number', message: 'x' },
        ],
      },
      null,
      'Enter a phone number, for example +7 912 345-67-89.',
    ],
    [
      'validation_error',
      400,
      { errors: [{ field: 'phone_number', message: 'x' }] },
      null,
      'Enter a phone number, for example +7 912 345-67-89.',
    ],
    [
      'validation_error',
      400,
      { errors: [{ field: 'method', message: 'x' }] },
      null,
      'Please check what you entered.',
    ],
    ['validation_error', 400, {}, null, 'Please check what you entered.'],
    ['something_new', 400, {}, null, 'Something went wrong (something_new). Please try again.'],
  ] as const)('%s %i %j (wait %s): %s', (code, status, problem, waitMs, words) => {
    expect(refusalText(refused(code, status, problem), waitMs, say)).toBe(words);
  });
});
