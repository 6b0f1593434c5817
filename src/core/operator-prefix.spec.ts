import { describe, expect, it } from '@jest/globals';
import { nationalDestinationCode, operatorPrefixOf } from './operator-prefix.js';

describe('nationalDestinationCode', () => {
  it.each([
    ['+79853456789', '985'],
    ['+79123456789', '912'],
    ['+4915123456789', '1512'],
    ['+442079460958', '20'],
  ])('%s → %s', (e164, ndc) => {
    expect(nationalDestinationCode(e164)).toBe(ndc);
  });

  it('is empty for a number that does not parse or whose format has no destination group', () => {
    expect(nationalDestinationCode('+0123')).toBe('');
    expect(nationalDestinationCode('not a number')).toBe('');
    expect(nationalDestinationCode('+99912345')).toBe('');
  });

  it('answers each number by its own head: two numbers sharing 7 characters but not 8 differ', () => {
    // +7 985 and +7 9851: the heads +798534 and +798512 are remembered apart.
    expect(nationalDestinationCode('+79853456789')).toBe('985');
    expect(nationalDestinationCode('+79123456789')).toBe('912');
    expect(nationalDestinationCode('+79853456780')).toBe('985');
  });

  it('does not remember a head that is shorter than 6 digits: a short text is parsed each time', () => {
    expect(nationalDestinationCode('+7912')).toBe('');
    expect(nationalDestinationCode('+79123456789')).toBe('912');
  });

  it('stays right past its 10,000 remembered heads (the memory is cleared, never wrong)', () => {
    for (let i = 0; i < 10_050; i++)
      nationalDestinationCode(`+1${String(2_000_000 + i).padStart(7, '0')}0000`);
    expect(nationalDestinationCode('+79853456789')).toBe('985');
    expect(nationalDestinationCode('+4915123456789')).toBe('1512');
  });
});

describe('operatorPrefixOf (calling code and destination code)', () => {
  it.each([
    ['+79853456789', '+7985'],
    ['+4915123456789', '+491512'],
    ['+442079460958', '+4420'],
  ])('%s → %s', (e164, prefix) => {
    expect(operatorPrefixOf(e164)).toBe(prefix);
  });

  it('is the calling code alone when the international format has no destination group', () => {
    // A head no valid number has been asked with (one that has answers for the numbers of its head).
    expect(operatorPrefixOf('+7495123')).toBe('+7');
  });

  it('is "+" and the first digit for text that does not parse', () => {
    expect(operatorPrefixOf('+0')).toBe('+0');
    expect(operatorPrefixOf('x123')).toBe('x1');
    expect(operatorPrefixOf('+99912345')).toBe('+9');
  });

  it('two valid numbers of one head answer each its own prefix, whichever is asked first', () => {
    // Estonia's mobiles have 7 or 8 digits, grouped apart; Mongolia's 5-digit codes run past the head.
    const pairs = [
      ['+37251538392', '+3725153', '+3725153357', '+372515'],
      ['+976154894990', '+97615489', '+976154801488', '+97615480'],
      ['+4933401846577', '+4933401', '+49334012', '+49'],
    ];
    for (const [first, firstPrefix, second, secondPrefix] of pairs) {
      expect(operatorPrefixOf(first!)).toBe(firstPrefix);
      expect(operatorPrefixOf(second!)).toBe(secondPrefix);
      // And the other way round, on numbers of the same heads not asked yet.
      const later = (n: string) => n.slice(0, -1) + String((Number(n.at(-1)) + 1) % 10);
      expect(operatorPrefixOf(later(second!))).toBe(secondPrefix);
      expect(operatorPrefixOf(later(first!))).toBe(firstPrefix);
    }
  });

  it('a number too short or too long to be valid, asked first, never answers for the valid numbers of its head', () => {
    for (const odd of ['+7916555', '+79165551', '+791655512345678'])
      expect(nationalDestinationCode(odd)).toBe('');
    expect(nationalDestinationCode('+79165551234')).toBe('916');
    expect(operatorPrefixOf('+79165551234')).toBe('+7916');
  });
});
