import { describe, expect, it } from '@jest/globals';
import { backoffDelay, parseRetryAfter } from './retry-policy.js';

describe('retry policy', () => {
  it('reads Retry-After as seconds or an HTTP-date', () => {
    const now = Date.parse('2026-10-01T12:00:00Z');
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Thu, 01 Oct 2026 12:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Thu, 01 Oct 2026 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it('draws full-jitter delays below an exponentially growing, capped ceiling', () => {
    expect(backoffDelay(0, () => 0.999)).toBe(99);
    expect(backoffDelay(3, () => 0.5)).toBe(400);
    expect(backoffDelay(20, () => 0.999)).toBe(1998);
    expect(backoffDelay(5, () => 0)).toBe(0);
  });
});
