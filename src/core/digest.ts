import { createHash } from 'node:crypto';

/** 128 bits of SHA-256, base64url: short store keys that do not list who called or which numbers. */
export function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64url').slice(0, 22);
}
