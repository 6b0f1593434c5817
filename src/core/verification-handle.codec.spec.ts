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

  it('one verification has one handle string: sealing again gives the same text, another owner or id another', () => {
    const handle = codec.seal('req-4', 'alice');
    expect(codec.seal('req-4', 'alice')).toBe(handle);
    expect(
      new VerificationHandleCodec('a-test-secret-of-enough-length-0123456789').seal('req-4', 'alice'),
    ).toBe(handle);
    expect(codec.seal('req-4', 'bob')).not.toBe(handle);
    expect(codec.seal('req-5', 'alice')).not.toBe(handle);
    expect(codec.seal('req-4', undefined)).not.toBe(handle);
    // IVs differ with what is sealed (a shared IV under one GCM key would leak the plaintexts' XOR).
    const iv = (h: string) => Buffer.from(h, 'base64url').subarray(1, 13).toString('hex');
    expect(new Set([iv(handle), iv(codec.seal('req-5', 'alice')), iv(codec.seal('req-4', 'bob'))]).size).toBe(
      3,
    );
  });
});
