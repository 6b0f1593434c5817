import { createHash } from 'node:crypto';

/**
 * 128 bits of SHA-256, base64url: short store keys for ids that name no one (request ids). What names
 * a person (a number, an address, an owner) is digested with the data key instead (`DataKeys.digest`).
 */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
