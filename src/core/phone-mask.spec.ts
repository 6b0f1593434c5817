import { describe, expect, it } from '@jest/globals';
import { maskPhoneNumber } from './phone-mask.js';

describe('maskPhoneNumber', () => {
  it("keeps the calling code's first digit and the last four digits", () => {
    expect(maskPhoneNumber('+79123454567')).toBe('+7******4567');
    expect(maskPhoneNumber('+4420794607')).toBe('+4*****4607');
    expect(maskPhoneNumber('+1234567')).toBe('+1**4567');
    expect(maskPhoneNumber('+123456')).toBe('+1*3456');
  });

  it('masks a value too short to keep anything of it whole', () => {
    expect(maskPhoneNumber('+12345')).toBe('******');
    expect(maskPhoneNumber('+1')).toBe('**');
    expect(maskPhoneNumber('')).toBe('');
  });
});
