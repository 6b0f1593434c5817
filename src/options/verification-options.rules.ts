import { isSupportedCountry } from 'libphonenumber-js/max';
import type { RateLimit } from './verification.options.js';

/** The checks each option is held to at boot; a failed one names the field and what was given. */

/** Thrown at boot when an option is wrong; the message names the field. */
export class VerificationOptionsError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`VerificationModule: option "${field}" ${problem}`);
    this.name = 'VerificationOptionsError';
  }
}

export type Check = (value: unknown) => string | undefined;
export const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
export const nonEmptyString: Check = (v) =>
  typeof v === 'string' && v.trim() !== '' ? undefined : 'must be a non-empty string';
export const positiveInt: Check = (v) =>
  Number.isInteger(v) && (v as number) > 0 ? undefined : `must be a positive integer (got ${describe(v)})`;
export const nonNegativeInt: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0
    ? undefined
    : `must be a non-negative integer (got ${describe(v)})`;
export const fn: Check = (v) => (typeof v === 'function' ? undefined : 'must be a function');
export const bool: Check = (v) =>
  typeof v === 'boolean' ? undefined : `must be true or false (got ${describe(v)})`;

export function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}

export function check(field: string, value: unknown, ...checks: Check[]): void {
  for (const c of checks) {
    const problem = c(value);
    if (problem) throw new VerificationOptionsError(field, problem);
  }
}
export function optional(field: string, value: unknown, ...checks: Check[]): void {
  if (value !== undefined) check(field, value, ...checks);
}

export function rateLimit(
  field: string,
  value: RateLimit | false | undefined,
  fallback: RateLimit,
): RateLimit | false {
  if (value === undefined) return fallback;
  if (value === false) return false;
  if (!isObject(value)) throw new VerificationOptionsError(field, 'must be { points, windowMs } or false');
  check(`${field}.points`, value.points, positiveInt);
  check(`${field}.windowMs`, value.windowMs, positiveInt);
  return { points: value.points, windowMs: value.windowMs };
}

/** `routes.allowedOrigins` as browsers send them in `Origin` (scheme://host[:port], no path). */
export function resolveOrigins(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new VerificationOptionsError(
      'routes.allowedOrigins',
      'must be an array of origins like ["https://shop.example"]',
    );
  return value.map((origin: unknown, i) => {
    const parsed = typeof origin === 'string' ? parseUrl(origin) : undefined;
    if (
      typeof origin !== 'string' ||
      !parsed ||
      parsed.origin === 'null' ||
      parsed.origin !== origin.replace(/\/$/, '').toLowerCase()
    )
      throw new VerificationOptionsError(
        `routes.allowedOrigins[${i}]`,
        `must be an origin like "https://shop.example" (scheme, host and port only; got ${describe(origin)})`,
      );
    return parsed.origin;
  });
}

export function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Common non-ISO spellings of a country, and the ISO 3166 code meant. */
export const ISO_SPELLINGS: Record<string, string> = { UK: 'GB', EN: 'GB', EL: 'GR' };

/** A code libphonenumber-js has numbering data for (a code it does not know would refuse every number). */
export const knownCountry: Check = (v) => {
  if (isSupportedCountry(v as string)) return undefined;
  const meant = ISO_SPELLINGS[v as string];
  return `is not an ISO 3166 alpha-2 country code with phone numbering data (got ${describe(v)}${
    meant ? `; did you mean "${meant}"?` : ''
  })`;
};
