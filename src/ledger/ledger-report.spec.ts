import { describe, expect, it } from '@jest/globals';
import { csvCell, figuresOf, ledgerCsv, type LedgerDayReport } from './ledger-report.js';
import { overflowOf, parseRowId, rowId, rowKeyOf } from './ledger-row.js';

const counts = { started: 4, delivered: 3, verified: 3, expired: 1, failed: 0, charged: 1000 };

describe('ledger figures and CSV', () => {
  it('figures: the charge in major units and per verified session, null with none verified', () => {
    expect(figuresOf(counts)).toStrictEqual({
      started: 4,
      delivered: 3,
      verified: 3,
      expired: 1,
      failed: 0,
      expected: 10,
      costPerVerified: 3.3333,
    });
    expect(figuresOf({ ...counts, verified: 0 }).costPerVerified).toBeNull();
    expect(figuresOf({ ...counts, verified: 1, charged: 5 }).costPerVerified).toBe(0.05);
  });

  it('verified sessions that cost nothing cost 0 per verified session, not nothing', () => {
    expect(figuresOf({ ...counts, charged: 0 })).toMatchObject({ expected: 0, costPerVerified: 0 });
  });

  it.each([
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['+7912', "'+7912"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tx', "'\tx"],
    ['\rx', `"'\rx"`],
    ['a,b', '"a,b"'],
    ['line\nbreak', '"line\nbreak"'],
    ['plain', 'plain'],
    ['', ''],
  ])('a text cell %j is written %j', (text, cell) => {
    expect(csvCell(text)).toBe(cell);
  });

  it('numbers are written as numbers (a negative one too); not-a-number and nothing as empty', () => {
    expect([csvCell(-1.5), csvCell(0), csvCell(Number.NaN), csvCell(null), csvCell(undefined)]).toStrictEqual(
      ['-1.5', '0', '', '', ''],
    );
  });

  it('a day: header, rows, total, CRLF', () => {
    const report: LedgerDayReport = {
      date: '2026-03-15',
      currency: 'RUB',
      final: true,
      rows: [{ method: 'sms', prefix: '=cmd|/c calc', ...figuresOf(counts) }],
      totals: figuresOf({ ...counts, verified: 0 }),
      usage: null,
      drift: null,
      tolerance: 1,
      beyondTolerance: false,
    };
    expect(ledgerCsv(report)).toBe(
      'date,method,prefix,started,delivered,verified,expired,failed,expected,cost_per_verified,currency\r\n' +
        "2026-03-15,sms,'=cmd|/c calc,4,3,3,1,0,10,3.3333,RUB\r\n" +
        '2026-03-15,total,,4,3,0,1,0,10,,RUB\r\n',
    );
  });
});

describe('ledger rows', () => {
  it('a row is its method and operator prefix; a number that does not parse keeps + and a digit', () => {
    expect(rowKeyOf({ method: 'sms', phoneNumber: '+79851234567' })).toStrictEqual({
      method: 'sms',
      prefix: '+7985',
    });
    expect(rowKeyOf({ method: 'voice', phoneNumber: '+999' })).toStrictEqual({
      method: 'voice',
      prefix: '+9',
    });
    expect(rowKeyOf({ method: 'pigeon', phoneNumber: '+442071234567' })).toStrictEqual({
      method: 'other',
      prefix: '+4420',
    });
  });

  it('names round-trip, however odd the values; other shapes are no row', () => {
    const key = { method: 'a|b', prefix: '%+7' };
    expect(rowId(key)).toBe('a%7Cb|%25%2B7');
    expect(parseRowId(rowId(key))).toStrictEqual(key);
    expect(parseRowId('sms')).toBeUndefined();
    expect(parseRowId('sms|+7|x')).toBeUndefined();
    expect(parseRowId('sms|%E0%A4%A')).toBeUndefined();
    expect(overflowOf({ method: 'sms', prefix: '+7912' })).toStrictEqual({ method: 'sms', prefix: 'other' });
  });
});
