import { describe, expect, it } from '@jest/globals';
import { errorText } from './error-text.js';

describe('errorText', () => {
  it('gives the name and the message, so a log line says what failed', () => {
    expect(errorText(new RangeError('socket hang up'))).toBe('RangeError: socket hang up');
  });

  it('gives the name alone for an error without a message, and the type of a thrown non-error', () => {
    expect(errorText(new TypeError())).toBe('TypeError');
    expect(errorText('text')).toBe('string');
    expect(errorText(undefined)).toBe('undefined');
  });

  it('caps a long message at 300 characters', () => {
    const text = errorText(new Error('x'.repeat(1000)));
    expect(text).toBe(`Error: ${'x'.repeat(293)}…`);
    // Exactly 300 is whole; 301 is cut.
    expect(errorText(new Error('x'.repeat(293)))).toBe(`Error: ${'x'.repeat(293)}`);
    expect(errorText(new Error('x'.repeat(294)))).toBe(`Error: ${'x'.repeat(293)}…`);
  });

  it("never throws: an error whose message or name getter throws is said so, and the caller's line still written", () => {
    const badMessage = new Error('x');
    Object.defineProperty(badMessage, 'message', {
      get() {
        throw new Error('no');
      },
    });
    const badName = new Error('x');
    Object.defineProperty(badName, 'name', {
      get() {
        throw new Error('no');
      },
    });
    expect(errorText(badMessage)).toBe('Error (its name or message could not be read)');
    expect(errorText(badName)).toBe('Error (its name or message could not be read)');
    const revoked = Proxy.revocable(new Error('x'), {});
    revoked.revoke();
    expect(errorText(revoked.proxy)).toBe('Error (its name or message could not be read)');
  });
});
