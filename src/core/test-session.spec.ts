import { describe, expect, it } from '@jest/globals';
import {
  isSpareTestSession,
  isTestSession,
  spareTestRequestId,
  storedSessionId,
  TEST_SESSION_PREFIX,
} from './test-session.js';

const UPSTREAM = '0f8fad5b-d9cb-469f-a165-70867728950e';
const POOL = 'AbCdEfGhIjKlMnOpQrStUvWxYz';

describe('test sessions told apart by their request id', () => {
  it('a spare session’s id is as long as an upstream id: prefix, 22 characters of its pool, its slot, its tail', () => {
    const id = spareTestRequestId(POOL, 3, 'tail-0123456789abcdef');
    expect(id).toBe('test_xAbCdEfGhIjKlMnOpQrStUv3tail-01');
    expect(id).toHaveLength(UPSTREAM.length);
  });

  it('pads a short pool with zeros and keeps the slot to one digit', () => {
    expect(spareTestRequestId('ab', 12, 'zzzzzzzzzzzzzzzzz')).toBe('test_xab000000000000000000002zzzzzzz');
  });

  it('two sessions of one slot share what they are stored under; other slots and other ids do not', () => {
    const a = spareTestRequestId(POOL, 1, 'aaaaaaaaaaaaaaaaaaaa');
    const b = spareTestRequestId(POOL, 1, 'bbbbbbbbbbbbbbbbbbbb');
    expect(a).not.toBe(b);
    expect(storedSessionId(a)).toBe(storedSessionId(b));
    expect(storedSessionId(a)).toBe('test_xAbCdEfGhIjKlMnOpQrStUv1');
    expect(storedSessionId(spareTestRequestId(POOL, 2, 'aaaaaaaaaaaaaaaaaaaa'))).not.toBe(storedSessionId(a));
    expect(storedSessionId(UPSTREAM)).toBe(UPSTREAM);
    expect(storedSessionId('test_0f8fad5b-d9cb-469f-a165-70867728950e')).toBe(
      'test_0f8fad5b-d9cb-469f-a165-70867728950e',
    );
  });

  it.each([
    [UPSTREAM, false, false],
    [`${TEST_SESSION_PREFIX}0f8fad5b`, true, false],
    ['test_x1', true, true],
    ['xtest_', false, false],
    [undefined, false, false],
  ])('%p: a test session %p, a spare one %p', (id, test, spare) => {
    expect(isTestSession(id)).toBe(test);
    expect(isSpareTestSession(id)).toBe(spare);
  });
});
