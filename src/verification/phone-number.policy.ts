import { parseTypedNumber } from '../core/phone-number.js';
import { VerificationClientError } from '../core/verification.errors.js';

export interface PhonePolicy {
  defaultCountry: string;
  allowedCountries: string[];
  allowedTypes: string[];
}

export interface NormalizedPhone {
  /** E.164. */
  e164: string;
  country: string | undefined;
  type: string | undefined;
}

/**
 * Turns what a person typed into E.164 with libphonenumber-js (full metadata: the number type
 * and the country behind a shared calling code, such as +7 7xx for Kazakhstan, need it) and
 * applies the deployment's country and number-type allowlists.
 */
export class PhoneNumberNormalizer {
  constructor(private readonly policy: PhonePolicy) {}

  normalize(input: string): NormalizedPhone {
    const parsed = parseTypedNumber(input, this.policy.defaultCountry, 'phone_number');
    const country = parsed.country;
    const type = parsed.getType();
    if (!country || !this.policy.allowedCountries.includes(country))
      throw new VerificationClientError(
        'phone_not_allowed',
        'Numbers of this country cannot be verified here',
        {
          reason: 'country',
        },
      );
    if (!type || !this.policy.allowedTypes.includes(type))
      throw new VerificationClientError('phone_not_allowed', 'Only mobile numbers can be verified', {
        reason: 'number_type',
      });
    return { e164: parsed.number, country, type };
  }
}
