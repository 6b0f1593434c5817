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

describe('VerificationHandleCodec: what a handle is, across deployments and registrations', () => {
  const SECRET = 'a-test-secret-of-enough-length-0123456789';

  it('a handle sealed before a restart or an upgrade is the same string and opens: the derivation is fixed', () => {
    expect(new VerificationHandleCodec(SECRET).seal('req-1', 'alice')).toBe(
      'AdA7wBNNSBJTRPv4NYbiZvmh5giXqGM10HU4HFl_gTHgZg',
    );
    expect(new VerificationHandleCodec(SECRET, 'shop').seal('req-1', 'alice')).toBe(
      'AZeLkFI1mn-C8dlztYtDqEBJhDqNOhgpREeKdz2_gh9K_A',
    );
    expect(
      new VerificationHandleCodec(SECRET).open('AdA7wBNNSBJTRPv4NYbiZvmh5giXqGM10HU4HFl_gTHgZg', 'alice'),
    ).toBe('req-1');
  });

  it('two registrations given one key never open each other’s handles or journey tokens', () => {
    const unnamed = new VerificationHandleCodec(SECRET);
    const shop = new VerificationHandleCodec(SECRET, 'shop');
    const blog = new VerificationHandleCodec(SECRET, 'blog');
    const journey = { journeyId: 'req-1', steps: [{ requestId: 'req-1', method: 'sms', startedAt: 1 }] };
    for (const [sealer, others] of [
      [shop, [unnamed, blog]],
      [unnamed, [shop, blog]],
    ] as const) {
      const handle = sealer.seal('req-1', 'alice');
      const token = sealer.sealJourney(journey, 'alice');
      expect(sealer.open(handle, 'alice')).toBe('req-1');
      expect(sealer.openJourney(token, 'alice')).toStrictEqual(journey);
      for (const other of others) {
        expect(other.open(handle, 'alice')).toBeNull();
        expect(other.openJourney(token, 'alice')).toBeNull();
      }
    }
  });
});

describe('VerificationHandleCodec.open: what is refused before any key is tried', () => {
  const SECRET = 'a-test-secret-of-enough-length-0123456789';

  it('a value that is not a string is refused, not thrown on', () => {
    const codec = new VerificationHandleCodec(SECRET);
    for (const value of [12345, null, undefined, {}, ['AAAA']]) {
      expect(codec.open(value, undefined)).toBeNull();
      expect(codec.openJourney(value, undefined)).toBeNull();
    }
  });

  it('at most 256 characters: the handle of a 163-character id opens, that of a 164-character one is refused', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const longest = codec.seal('r'.repeat(163), 'alice');
    expect(longest).toHaveLength(256);
    expect(codec.open(longest, 'alice')).toBe('r'.repeat(163));
    const over = codec.seal('r'.repeat(164), 'alice');
    expect(over).toHaveLength(258);
    expect(codec.open(over, 'alice')).toBeNull();
  });

  it('a one-character id opens; an empty one never does (a handle carries at least one byte)', () => {
    const codec = new VerificationHandleCodec(SECRET);
    expect(codec.open(codec.seal('x', undefined), undefined)).toBe('x');
    expect(codec.open(codec.seal('', undefined), undefined)).toBeNull();
    expect(codec.open(codec.seal('', 'alice'), 'alice')).toBeNull();
  });

  it('a handle whose format byte was changed is refused', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const handle = codec.seal('req-1', 'alice');
    for (const version of [0, 2, 9]) {
      const bytes = Buffer.from(handle, 'base64url');
      bytes[0] = version;
      expect(codec.open(bytes.toString('base64url'), 'alice')).toBeNull();
    }
  });

  it('another spelling of the same bytes is refused: one verification, one handle string', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const handle = codec.seal('req-1', 'alice');
    const bytes = Buffer.from(handle, 'base64url');
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const spellings = [...alphabet]
      .map((c) => handle.slice(0, -1) + c)
      .filter((s) => s !== handle && Buffer.from(s, 'base64url').equals(bytes));
    expect(spellings.length).toBeGreaterThan(0);
    for (const spelling of spellings) expect(codec.open(spelling, 'alice')).toBeNull();
    expect(codec.open(handle, 'alice')).toBe('req-1');
  });

  it('a handle opened for one owner never opens for another through what this instance remembers', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const bobs = codec.seal('req-b', 'bob');
    expect(codec.open(bobs, 'bob')).toBe('req-b');
    // The remembered key of (handle, owner) joins them with a NUL: a handle holding one is refused.
    expect(codec.open(`${bobs}\u0000bob`, undefined)).toBeNull();
    const ownerless = codec.seal('req-o', undefined);
    expect(codec.open(ownerless, undefined)).toBe('req-o');
    expect(codec.open(ownerless, 'undefined')).toBeNull();
    expect(codec.open(ownerless, '')).toBeNull();
  });
});

describe('VerificationHandleCodec: a journey token carries the steps back to the owner it was sealed for', () => {
  const SECRET = 'a-test-secret-of-enough-length-0123456789';
  const steps = [
    { requestId: 'req-1', method: 'sms', startedAt: 1_700_000_000_000 },
    { requestId: 'req-2', method: 'voice', startedAt: 1_700_000_030_000 },
  ];

  it('opens to the journey it sealed, with its device or without one, and seals it again to the same token', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const mobile = { journeyId: 'req-1', steps, device: 'mobile' as const };
    const token = codec.sealJourney(mobile, 'alice');
    expect(codec.openJourney(token, 'alice')).toStrictEqual(mobile);
    expect(new VerificationHandleCodec(SECRET).sealJourney(mobile, 'alice')).toBe(token);
    const anyDevice = { journeyId: 'req-1', steps };
    const plain = codec.sealJourney(anyDevice, undefined);
    expect(codec.openJourney(plain, undefined)).toStrictEqual(anyDevice);
    expect(plain).not.toBe(codec.sealJourney(mobile, undefined));
  });

  it('only for its owner, only as sealed, and never as a handle nor a handle as a token', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const token = codec.sealJourney({ journeyId: 'req-1', steps }, 'alice');
    expect(codec.openJourney(token, 'bob')).toBeNull();
    expect(codec.openJourney(token, undefined)).toBeNull();
    const ownerless = codec.sealJourney({ journeyId: 'req-1', steps }, undefined);
    expect(codec.openJourney(ownerless, '')).toBeNull();
    const last = token.at(-1)!;
    expect(codec.openJourney(token.slice(0, -1) + (last === 'A' ? 'B' : 'A'), 'alice')).toBeNull();
    expect(codec.openJourney(`${token}!`, 'alice')).toBeNull();
    expect(codec.open(token, 'alice')).toBeNull();
    expect(codec.openJourney(codec.seal('req-1', 'alice'), 'alice')).toBeNull();
  });

  it('at most 2048 characters', () => {
    const codec = new VerificationHandleCodec(SECRET);
    const carrying = (n: number) => ({ journeyId: 'r'.repeat(n), steps: steps.slice(0, 1) });
    const longest = codec.sealJourney(carrying(1463), undefined);
    expect(longest).toHaveLength(2048);
    expect(codec.openJourney(longest, undefined)).toStrictEqual(carrying(1463));
    const over = codec.sealJourney(carrying(1464), undefined);
    expect(over).toHaveLength(2050);
    expect(codec.openJourney(over, undefined)).toBeNull();
  });
});
