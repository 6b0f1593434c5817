import { describe, expect, it } from '@jest/globals';
import { parseEntry } from './history-rings.js';

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
