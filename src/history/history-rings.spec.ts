import { describe, expect, it } from '@jest/globals';
import { DataKeys } from '../core/data-keys.js';
import { numberRing, parseEntry, ringOf } from './history-rings.js';

describe("history rings: a slot's text is an entry only when it has its time and kind", () => {
  it.each([
    ['not JSON', 'history:{n:…}'],
    ['JSON without a time', JSON.stringify({ kind: 'start' })],
    ['JSON without a kind', JSON.stringify({ at: 1 })],
    ['a time that is not a number', JSON.stringify({ at: '1', kind: 'start' })],
    ['null', 'null'],
  ])('%s: skipped (null), never thrown', (_label, text) => {
    expect(parseEntry(text)).toBeNull();
  });

  it('an entry: its seq as a number, 0 when absent', () => {
    expect(parseEntry(JSON.stringify({ at: 5, kind: 'start', seq: '7' }))).toStrictEqual({
      at: 5,
      kind: 'start',
      seq: 7,
    });
    expect(parseEntry(JSON.stringify({ at: 5, kind: 'refusal' }))).toStrictEqual({
      at: 5,
      kind: 'refusal',
      seq: 0,
    });
  });
});

describe("history rings: the ring a query reads, as a plain-JS caller's query gives it", () => {
  const keys = new DataKeys(undefined, 'an api secret of the host');
  const number = '+79123456789';

  it("a number with `owner: null` (or undefined) beside it reads the number's ring", () => {
    expect(ringOf(keys, { phoneNumber: number, owner: null } as never, 'RU')).toBe(numberRing(keys, number));
    expect(ringOf(keys, { phoneNumber: number, owner: undefined }, 'RU')).toBe(numberRing(keys, number));
  });

  it('`owner: null` alone names no subject: refused as giving neither', () => {
    expect(() => ringOf(keys, { owner: null } as never, 'RU')).toThrow('Give either phoneNumber or owner');
  });
});
