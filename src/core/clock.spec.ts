import { describe, expect, it } from '@jest/globals';
import { calendarDate, DAY_MS, utcDate } from './clock.js';
import { ArgumentRangeError } from './phone-verification.error.js';

describe('utcDate', () => {
  it('is the UTC date of an instant, its last millisecond included', () => {
    const midnight = Date.parse('2026-03-01T00:00:00Z');
    expect(utcDate(midnight)).toBe('2026-03-01');
    expect(utcDate(midnight - 1)).toBe('2026-02-28');
    expect(utcDate(midnight + DAY_MS - 1)).toBe('2026-03-01');
    expect(utcDate(midnight + DAY_MS)).toBe('2026-03-02');
  });
});

describe('calendarDate', () => {
  const refusal = (value: unknown): string => {
    try {
      calendarDate('getUsage', 'from', value as string);
    } catch (error) {
      expect(error).toBeInstanceOf(ArgumentRangeError);
      return (error as Error).message;
    }
    throw new Error(`${String(value)} was taken`);
  };

  it('takes YYYY-MM-DD as given and a Date as its UTC date', () => {
    expect(calendarDate('getUsage', 'from', '2026-02-28')).toBe('2026-02-28');
    expect(calendarDate('getUsage', 'to', new Date('2026-02-28T23:59:59.999Z'))).toBe('2026-02-28');
  });

  it.each([
    '2026-2-28',
    '26-02-28',
    '2026-02-28T00:00:00Z',
    ' 2026-02-28',
    '2026-02-28 ',
    '2026/02/28',
    'abcd-ef-gh',
    '',
    '+002026-02-28',
  ])('%p is refused naming the call, the field and the form', (value) => {
    expect(refusal(value)).toBe('getUsage: "from" must be a date like 2026-01-31 or a Date');
  });

  it('refuses a value that is neither text nor a Date', () => {
    expect(refusal(20260228)).toBe('getUsage: "from" must be a date like 2026-01-31 or a Date');
  });

  it('refuses a day the month does not have (Date.parse would roll it over) and a month past 12', () => {
    expect(refusal('2026-02-31')).toBe('getUsage: "from" is not a calendar date');
    expect(refusal('2026-02-29')).toBe('getUsage: "from" is not a calendar date');
    expect(calendarDate('getUsage', 'from', '2028-02-29')).toBe('2028-02-29');
    expect(refusal('2026-13-01')).toBe('getUsage: "from" must be a date like 2026-01-31 or a Date');
  });

  it('refuses an invalid Date', () => {
    expect(refusal(new Date('nope'))).toBe('getUsage: "from" is an invalid Date');
  });
});
