import { describe, expect, it } from '@jest/globals';
import { parseTypedNumber } from './phone-number.js';
import { VerificationClientError } from './verification.errors.js';

/** What a route answers for a typed number it refuses: the problem a client reads. */
function refusal(input: unknown, field = 'phone_number'): Record<string, unknown> {
  try {
    parseTypedNumber(input, 'RU', field);
  } catch (error) {
    expect(error).toBeInstanceOf(VerificationClientError);
    return (error as VerificationClientError).toProblem();
  }
  throw new Error(`${String(input)} was read as a number`);
}

describe('parseTypedNumber (a number as a person typed it)', () => {
  it.each([
    ['+7 912 345-67-89', '+79123456789'],
    ['8 912 345 67 89', '+79123456789'],
    ['  +7 (912) 345-67-89  ', '+79123456789'],
    ['7 912 345 67 89', '+79123456789'],
    ['+44 20 7946 0958', '+442079460958'],
  ])('%s reads as %s (the default country RU for a national form)', (typed, e164) => {
    expect(parseTypedNumber(typed, 'RU', 'phone_number').number).toBe(e164);
  });

  it('reads a national form by the default country given', () => {
    expect(parseTypedNumber('020 7946 0958', 'GB', 'phone').number).toBe('+442079460958');
  });

  it.each([
    [undefined, 'is not a phone number'],
    [79123456789, 'is not a phone number'],
    ['', 'is not a phone number'],
    ['call me', 'is not a phone number'],
    [`+7 912 345 67 89${' '.repeat(49)}`, 'is not a phone number'],
  ])('%p is refused before any parse: "phone_number %s"', (input, why) => {
    expect(refusal(input)).toMatchObject({
      status: 400,
      error_code: 'validation_error',
      detail: `phone_number ${why}`,
      errors: [{ field: 'phone_number', message: `phone_number ${why}` }],
    });
  });

  it('takes 64 characters (a number with spaces around it), refuses 65', () => {
    const padded = (n: number): string => '+79123456789'.padEnd(n, ' ');
    expect(parseTypedNumber(padded(64), 'RU', 'phone_number').number).toBe('+79123456789');
    expect(refusal(padded(65)).detail).toBe('phone_number is not a phone number');
  });

  it('names the parser’s reason in lower case when the text is no number at all', () => {
    expect(refusal('1', 'phone').detail).toBe('phone is not a phone number (too_short)');
    expect(refusal('12345678901234567890', 'phone').detail).toBe('phone is not a phone number (too_long)');
    expect(refusal('+999 1234', 'phone').detail).toBe('phone is not a phone number (invalid_country)');
  });

  it('refuses a number that parses but no plan knows (names the field given)', () => {
    expect(refusal('+7 000 000 00 00', 'phone')).toMatchObject({
      detail: 'phone is not a valid number',
      errors: [{ field: 'phone', message: 'phone is not a valid number' }],
    });
  });
});
