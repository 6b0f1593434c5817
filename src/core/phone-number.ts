import {
  parsePhoneNumberFromString,
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

/**
 * The operator prefix of an E.164 number: its calling code and national destination code (+7 985),
 * as the international format's first group gives it (libphonenumber's own way to find the NDC);
 * the calling code alone when the format has no such group.
 */
export function operatorPrefix(parsed: {
  countryCallingCode: string;
  formatInternational(): string;
}): string {
  const groups = parsed.formatInternational().split(' ');
  const ndc = groups.length > 2 ? groups[1]!.replace(/\D/g, '') : '';
  return `+${parsed.countryCallingCode}${ndc}`;
}

/** The operator prefix of an E.164 number (see operatorPrefix); `+` and the first digit when it does not parse. */
export function operatorPrefixOf(e164: string): string {
  const parsed = parsePhoneNumberFromString(e164);
  return parsed ? operatorPrefix(parsed) : e164.slice(0, 2);
}
