import { describe, expect, it } from '@jest/globals';
import { settledHeapUsed } from '../../test/hardening/support/heap.js';
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

  it('keeps a bounded number of times: a host formatting half a million distinct times holds none of them', () => {
    // Unbounded, the memo would hold every time's text and key: about 50 MB here.
    const base = Date.UTC(2027, 0, 1);
    const before = settledHeapUsed();
    for (let i = 0; i < 500_000; i += 1) isoTime(new Date(base + i));
    expect(settledHeapUsed() - before).toBeLessThan(8 * 1024 * 1024);
  });

  it('refuses an invalid date as toISOString does', () => {
    expect(() => isoTime(new Date(Number.NaN))).toThrow(RangeError);
  });
});
