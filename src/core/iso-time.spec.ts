import { describe, expect, it } from '@jest/globals';
import { isoTime } from './iso-time.js';

describe('isoTime', () => {
  it('writes a time as toISOString does, the same again when asked again', () => {
    const date = new Date(Date.UTC(2026, 10, 24, 3, 46, 17, 702));
    expect(isoTime(date)).toBe('2026-11-24T03:46:17.702Z');
    expect(isoTime(new Date(date.getTime()))).toBe('2026-11-24T03:46:17.702Z');
    expect(isoTime(new Date(0))).toBe('1970-01-01T00:00:00.000Z');
  });

  it('stays right past its bound, for every distinct time', () => {
    const base = Date.UTC(2026, 0, 1);
    for (let i = 0; i < 10_000; i += 1) {
      const date = new Date(base + i * 1_001);
      expect(isoTime(date)).toBe(date.toISOString());
    }
  });

  it('refuses an invalid date as toISOString does', () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
