import { createHash } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { digest } from './digest.js';

describe('digest', () => {
  it('is the first 128 bits of SHA-256 in base64url: 22 key-safe characters, the same for the same value', () => {
    const full = createHash('sha256').update('+79161234567').digest('base64url');
    expect(digest('+79161234567')).toBe(full.slice(0, 22));
    expect(digest('+79161234567')).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(digest('+79161234568')).not.toBe(digest('+79161234567'));
    // base64url, not base64: a digest never holds the store key separator ':' nor '/', '+' or '='.
    for (let i = 0; i < 64; i++) expect(digest(`caller-${i}`)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });
});
