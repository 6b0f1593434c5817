import { describe, expect, it } from '@jest/globals';
import { isEventOf } from './verification-events.js';

describe('isEventOf (which registration an event came from)', () => {
  it('an event of a named registration is that registration’s only', () => {
    expect(isEventOf({ registration: 'eu' }, 'eu')).toBe(true);
    expect(isEventOf({ registration: 'eu' }, 'us')).toBe(false);
    expect(isEventOf({ registration: 'eu' }, undefined)).toBe(false);
  });

  it('an event without a registration is the unnamed one’s', () => {
    expect(isEventOf({}, undefined)).toBe(true);
    expect(isEventOf({}, 'eu')).toBe(false);
  });
});
