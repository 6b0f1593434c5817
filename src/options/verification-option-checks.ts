import { isSupportedCountry } from 'libphonenumber-js/max';
import { describe, isObject, type Check } from '../core/option-rules.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';

/*
 * The checks the module's option table (verification-options.rules.ts) is written with, beyond the
 * general ones of core/option-rules.ts: each returns undefined for a good value, else what is wrong.
 */

/** A section of options: an object (absent, or `null`, when not given). */
export const section =
  (shape = 'an object'): Check =>
  (v) =>
    v === null || isObject(v) ? undefined : `must be ${shape}`;
/** An object, or `false` to switch the protection off. */
export const objectOrFalse =
  (shape: string): Check =>
  (v) =>
    v === false || isObject(v) ? undefined : `must be ${shape} or false`;
export const nonEmptyArray =
  (example: string): Check =>
  (v) =>
    Array.isArray(v) && v.length > 0 ? undefined : `must be a non-empty array like ${example}`;
export const array =
  (message = 'must be an array'): Check =>
  (v) =>
    Array.isArray(v) ? undefined : message;
export const intRange =
  (min: number, max: number, unit: string): Check =>
  (v) =>
    Number.isInteger(v) && (v as number) >= min && (v as number) <= max
      ? undefined
      : `must be a whole number of ${unit} from ${min} to ${max} (got ${describe(v)})`;
export const positiveNumber: Check = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v > 0
    ? undefined
    : `must be a positive number (got ${describe(v)})`;
export const share: Check = (v) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 && v < 1
    ? undefined
    : `must be a share from 0 to below 1 (got ${describe(v)})`;
export const matching =
  (pattern: RegExp, shape: string): Check =>
  (v) =>
    typeof v === 'string' && pattern.test(v) ? undefined : `must be ${shape} (got ${describe(v)})`;
export const alpha2 = (example: string): Check =>
  matching(/^[A-Z]{2}$/, `an ISO 3166 alpha-2 code${example}`);

export const knownMethod: Check = (v) =>
  (VERIFICATION_METHODS as readonly unknown[]).includes(v)
    ? undefined
    : `is not a known method (got ${describe(v)}; known: ${VERIFICATION_METHODS.join(', ')})`;

/** An object whose keys are all among `keys`. */
export const onlyKeys =
  (keys: readonly string[], what: string): Check =>
  (v) => {
    const unknown = Object.keys(v as object).find((key) => !keys.includes(key));
    return unknown === undefined
      ? undefined
      : `has an unknown key ${describe(unknown)} (${what}: ${keys.join(', ')})`;
  };

/** Common non-ISO spellings of a country, and the ISO 3166 code meant. */
const ISO_SPELLINGS: Record<string, string> = { UK: 'GB', EN: 'GB', EL: 'GR' };

/** A code libphonenumber-js has numbering data for (a code it does not know would refuse every number). */
export const knownCountry: Check = (v) => {
  if (isSupportedCountry(v as string)) return undefined;
  const meant = ISO_SPELLINGS[v as string];
  return `is not an ISO 3166 alpha-2 country code with phone numbering data (got ${describe(v)}${
    meant ? `; did you mean "${meant}"?` : ''
  })`;
};

/** An origin as browsers send it in `Origin` (scheme://host[:port], no path). */
export const origin: Check = (v) => {
  const parsed = typeof v === 'string' ? parseUrl(v) : undefined;
  return typeof v === 'string' &&
    parsed &&
    parsed.origin !== 'null' &&
    parsed.origin === v.replace(/\/$/, '').toLowerCase()
    ? undefined
    : `must be an origin like "https://shop.example" (scheme, host and port only; got ${describe(v)})`;
};

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/* ------------------------------------------------------------------ routes and webhooks, as the rules and the resolver both read them */

// Never echoes the value: it is a secret.
export const whsec: Check = (v) =>
  /^whsec_[A-Za-z0-9+/=]+$/.test(v as string)
    ? undefined
    : 'must be a Standard Webhooks secret ("whsec_<base64>")';
