/**
 * The option checks' answers at boot, value by value: what each refuses (a number given as text, an infinite
 * one, an origin with a path or none at all, a secret or country code with text around it) and the words of its
 * refusal, as the host reads them in the boot error.
 */
import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from './verification-options.resolver.js';
import type { VerificationModuleOptions } from './verification.options.js';
import { api, refusal, SECRET } from '../../test/support/option-refusals.js';

const boots = (options: unknown) => () => resolveVerificationOptions(options as VerificationModuleOptions);
const said = (options: unknown) =>
  refusal(options).message.replace(/^VerificationModule: option "[^"]+" /, '');

describe('the option checks at boot', () => {
  it('a positive number or a share is a number: the same given as text, or infinite, is refused', () => {
    const cap = (amount: unknown) => ({ api, limits: { spendCap: { amount, windowMs: 86_400_000 } } });
    expect(said(cap('5'))).toBe('must be a positive number (got "5")');
    expect(said(cap(Infinity))).toBe('must be a positive number (got Infinity)');
    expect(boots(cap(0.5))).not.toThrow();
    const reserve = (reserveShare: unknown) => ({ api, limits: { pumping: { reserveShare } } });
    expect(said(reserve('0.5'))).toBe('must be a share from 0 to below 1 (got "0.5")');
    expect(boots(reserve(0))).not.toThrow();
  });

  it('an unknown method is refused naming every known one', () => {
    expect(said({ api, orchestration: { methods: ['fax'] } })).toBe(
      'is not a known method (got "fax"; known: reverse_flash_call, flash_call, msgr1_otp, msgr2_bot, sms, operator_id, voice)',
    );
  });

  it('a country code: two capital letters alone, with numbering data; a common misspelling is named', () => {
    const country = (defaultCountry: unknown) => ({ api, phone: { defaultCountry } });
    expect(said(country('XX'))).toBe(
      'is not an ISO 3166 alpha-2 country code with phone numbering data (got "XX")',
    );
    expect(said(country('UK'))).toContain('did you mean "GB"?');
    for (const code of ['RUS', 'xRU']) expect(said(country(code))).toContain('ISO 3166 alpha-2 code');
    expect(boots(country('RU'))).not.toThrow();
  });

  it('an allowed origin is scheme, host and port as a browser sends it; anything else is refused', () => {
    const origins = (origin: unknown) => ({ api, routes: { allowedOrigins: [origin] } });
    for (const origin of [42, 'not a url', 'https://a.example/path', 'file:///etc/hosts'])
      expect(said(origins(origin))).toContain('must be an origin like "https://shop.example"');
    expect(boots(origins('https://Shop.example:8443/'))).not.toThrow();
  });

  it('a webhook secret starts with whsec_', () => {
    expect(said({ api, webhooks: { secret: `x${SECRET}` } })).toBe(
      'must be a Standard Webhooks secret ("whsec_<base64>")',
    );
    expect(boots({ api, webhooks: { secret: SECRET } })).not.toThrow();
  });
});
