import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { DataKeys } from './data-keys.js';

const SECRET = 'api-secret-api-secret-api-secret';
const NUMBER = '+79161234567';

describe('DataKeys', () => {
  it('digests with a key: 22 key-safe characters, the same for the same value, neither the plain SHA-256 nor an HMAC under the secret', () => {
    const keys = new DataKeys(undefined, SECRET);
    expect(keys.digest(NUMBER)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(keys.digest(NUMBER)).toBe(new DataKeys(undefined, SECRET).digest(NUMBER));
    expect(keys.digest(NUMBER)).not.toBe(keys.digest('+79161234568'));
    expect(keys.digest(NUMBER)).not.toBe(
      createHash('sha256').update(NUMBER).digest('base64url').slice(0, 22),
    );
    for (const key of [
      SECRET,
      Buffer.from(hkdfSync('sha256', SECRET, 'nestjs-phone-verification', 'data-key-v1', 32)),
    ])
      expect(keys.digest(NUMBER)).not.toBe(
        createHmac('sha256', key).update(NUMBER).digest('base64url').slice(0, 22),
      );
  });

  it('another data key (another account, a rotation, the option given) digests otherwise', () => {
    const digests = [
      new DataKeys(undefined, SECRET),
      new DataKeys(undefined, `${SECRET}2`),
      new DataKeys('d'.repeat(32), SECRET),
      new DataKeys(SECRET, 'unrelated'),
    ].map((k) => k.digest(NUMBER));
    expect(new Set(digests).size).toBe(4);
  });

  it('seals with a random IV and opens only under the same key; a tampered or foreign value opens as null', () => {
    const keys = new DataKeys(undefined, SECRET);
    const a = keys.seal(NUMBER);
    const b = keys.seal(NUMBER);
    expect(a).not.toBe(b);
    expect(a).not.toContain('9161234567');
    expect(keys.open(a)).toBe(NUMBER);
    expect(keys.open(b)).toBe(NUMBER);
    expect(new DataKeys(undefined, `${SECRET}2`).open(a)).toBeNull();
    const flipped = a.slice(0, -2) + (a.at(-2) === 'A' ? 'B' : 'A') + a.at(-1);
    expect(keys.open(flipped)).toBeNull();
    expect(keys.open(NUMBER)).toBeNull();
    expect(keys.open('v1.')).toBeNull();
    expect(keys.open(keys.seal(''))).toBe('');
  });

  it('reads what an earlier version wrote: the same digests and sealed values open (a store outlives an upgrade)', () => {
    // Written on 2026-12-03 by this version; a change of salt, label, prefix or text encoding would lose
    // every stored counter and session of a running host.
    const derived = new DataKeys(undefined, SECRET);
    const given = new DataKeys('d'.repeat(32), SECRET);
    expect(derived.digest(NUMBER)).toBe('fH6ljPS59hhCR1hf5GvPZu');
    expect(given.digest(NUMBER)).toBe('p9o2HzLvObizyiSg0wfG54');
    const sealed = 'v1.BSlo_ssEPqV3vFZC-zsEpzvPVNs3Axx-eL5Ihk6avBgEiDGq_2pWkhWnTw';
    expect(derived.open(sealed)).toBe('+7 916 Ёлка');
    expect(given.open('v1.a4RAGDsH7aYjhtinuQIppuoKnJ9nML5tZNFHc4ayxIc2n_8z')).toBe('owner-42');
    expect(derived.seal('+7 916 Ёлка')).toMatch(/^v1\.[\w-]+$/);
    // Another version's prefix on the same bytes is not this key's.
    expect(derived.open(`v2.${sealed.slice(3)}`)).toBeNull();
  });

  it('the resolver makes one per registration: from `dataKey` when given, else from that registration’s API secret', () => {
    const api = (apiSecret: string) => ({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret });
    const one = resolveVerificationOptions({ api: api(SECRET) }).dataKeys;
    const other = resolveVerificationOptions({ api: api(`${SECRET}2`), name: 'north' }).dataKeys;
    const given = resolveVerificationOptions({ api: api(SECRET), dataKey: 'd'.repeat(32) }).dataKeys;
    expect(one.digest(NUMBER)).toBe(new DataKeys(undefined, SECRET).digest(NUMBER));
    expect(other.digest(NUMBER)).not.toBe(one.digest(NUMBER));
    expect(given.digest(NUMBER)).toBe(new DataKeys('d'.repeat(32), SECRET).digest(NUMBER));
    expect(given.digest(NUMBER)).not.toBe(one.digest(NUMBER));
  });
});
