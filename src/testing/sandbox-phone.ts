import { randomInt } from 'node:crypto';

/**
 * Phone numbers in the sandbox. Input must be E.164 (`+` then 8 to 15 digits, no leading zero); spaces,
 * hyphens and parentheses are tolerated and removed, so responses carry the normalised form.
 */
export function normalizeE164(input: unknown): string | undefined {
  if (typeof input !== 'string' || input.length > 32) return undefined;
  const compact = input.replace(/[\s\-()]/g, '');
  return /^\+[1-9]\d{7,14}$/.test(compact) ? compact : undefined;
}

function digits(count: number): string {
  let out = '';
  for (let i = 0; i < count; i++) out += String(randomInt(10));
  return out;
}

/** A random code of `length` digits (leading zeros allowed, as real OTPs have). */
export function randomCode(length: number): string {
  return digits(length);
}

/** A gateway number from the +7 pool that reverse-flash-call users dial (+7 800 ... , toll-free style). */
export function poolNumberToCall(): string {
  return `+7800${digits(7)}`;
}

/** The caller ID of a flash call: a +7 mobile number (10 national digits) whose trailing digits are the code. */
export function flashCallerNumber(code: string): string {
  return `+79${digits(9 - code.length)}${code}`;
}
