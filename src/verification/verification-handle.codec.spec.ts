import { describe, expect, it } from '@jest/globals';
import { VerificationHandleCodec } from './verification-handle.codec.js';

describe('VerificationHandleCodec: a handle opens only for its owner, and only as sealed', () => {
  const codec = new VerificationHandleCodec('a-test-secret-of-enough-length-0123456789');

  it('opens the same handle again to the same request id, and only for its owner', () => {
    const mine = codec.seal('req-1', 'alice');
    expect(codec.open(mine, 'alice')).toBe('req-1');
    expect(codec.open(mine, 'alice')).toBe('req-1');
    expect(codec.open(mine, 'bob')).toBeNull();
    expect(codec.open(mine, undefined)).toBeNull();
    expect(codec.open(mine, 'alice\u0000')).toBeNull();
    const ownerless = codec.seal('req-2', undefined);
    expect(codec.open(ownerless, undefined)).toBe('req-2');
    expect(codec.open(ownerless, '')).toBeNull();
  });

  it('an altered spelling of an opened handle is refused', () => {
    const handle = codec.seal('req-3', undefined);
    expect(codec.open(handle, undefined)).toBe('req-3');
    const last = handle.at(-1)!;
    expect(codec.open(handle.slice(0, -1) + (last === 'A' ? 'B' : 'A'), undefined)).toBeNull();
    expect(codec.open(`${handle}A`, undefined)).toBeNull();
    expect(codec.open(handle.slice(0, -1), undefined)).toBeNull();
  });
});
