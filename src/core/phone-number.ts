import {
  parsePhoneNumberWithError,
  ParseError,
  type CountryCode,
  type PhoneNumber,
} from 'libphonenumber-js/max';
import { VerificationClientError } from './verification.errors.js';

const MAX_INPUT_CHARS = 64;

/**
 * A number as a person typed it (`8 912 …`, `+7 912 …`, or `7912…` where a query string turned the
 * `+` into a space), parsed with `defaultCountry` and checked valid; anything else is a
 * `validation_error` naming `field`. The one reading of a typed number: the routes' and the history's.
 */
export function parseTypedNumber(input: unknown, defaultCountry: string, field: string): PhoneNumber {
  if (typeof input !== 'string' || input.length > MAX_INPUT_CHARS || !/\d/.test(input))
    throw invalid(field, `${field} is not a phone number`);
  let parsed: PhoneNumber;
  try {
    parsed = parsePhoneNumberWithError(input.trim(), { defaultCountry: defaultCountry as CountryCode });
  } catch (error) {
    const why = error instanceof ParseError ? ` (${error.message.toLowerCase()})` : '';
    throw invalid(field, `${field} is not a phone number${why}`);
  }
  if (!parsed.isValid()) throw invalid(field, `${field} is not a valid number`);
  return parsed;
}

function invalid(field: string, detail: string): VerificationClientError {
  return new VerificationClientError('validation_error', detail, { errors: [{ field, message: detail }] });
}
