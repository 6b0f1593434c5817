import { describe, expect, it } from '@jest/globals';
import { CODE_LENGTH_BOUNDS, CODE_PATTERN, CODE_RULE, isVerificationCode } from './verification-code.js';

describe('verification code: 4 to 8 ASCII digits, nothing else', () => {
  it('takes every length from 4 to 8 digits', () => {
    for (const code of ['0000', '12345', '123456', '1234567', '98765432'])
      expect(isVerificationCode(code)).toBe(true);
  });

  it('refuses too short, too long, non-digits, other scripts, padding and non-strings', () => {
    for (const code of [
      '',
      '123',
      '123456789',
      '12a4',
      '12 34',
      ' 1234',
      '1234\n',
      '+1234',
      '-1234',
      '1234.5',
      '١٢٣٤', // Arabic-Indic digits
      '１２３４', // full-width digits
    ])
      expect(isVerificationCode(code)).toBe(false);
    for (const value of [1234, null, undefined, ['1234'], { code: '1234' }])
      expect(isVerificationCode(value)).toBe(false);
  });

  it('states the same rule for OpenAPI and refusals', () => {
    expect(CODE_LENGTH_BOUNDS).toStrictEqual({ min: 4, max: 8 });
    expect(CODE_PATTERN.source).toBe('^\\d{4,8}$');
    expect(CODE_PATTERN.flags).toBe('');
    expect(CODE_RULE).toBe('4 to 8 digits');
  });
});
