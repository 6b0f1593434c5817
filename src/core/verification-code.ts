/** The code the user types: the one rule of what a code may be. */

/** Digits a code may have: the spec's bounds of a check request (a session's own length lies within them). */
export const CODE_LENGTH_BOUNDS = { min: 4, max: 8 } as const;

/** A code as a check request takes it: digits only (`\d` without the `u` flag: ASCII 0-9 only), within the bounds. */
export const CODE_PATTERN = new RegExp(`^\\d{${CODE_LENGTH_BOUNDS.min},${CODE_LENGTH_BOUNDS.max}}$`);

/** How the rule reads in a refusal and in the OpenAPI document. */
export const CODE_RULE = `${CODE_LENGTH_BOUNDS.min} to ${CODE_LENGTH_BOUNDS.max} digits`;

export function isVerificationCode(value: unknown): value is string {
  return typeof value === 'string' && CODE_PATTERN.test(value);
}
