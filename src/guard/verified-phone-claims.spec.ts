import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import type { VerificationModuleOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS } from '../sessions/session-record.repository.js';
import { SubjectIndex } from '../sessions/subject-index.js';
import { MemoryStore } from '../store/memory.store.js';
import { claimKey, claimMac, claimRegistration, VerifiedPhoneClaims } from './verified-phone-claims.js';

const HANDLE_KEY = 'one-handle-key-for-every-registration-0123';
const TTL = 600_000;
// HKDF-SHA256 (RFC 5869) then HMAC-SHA256, computed apart from this code (Python's hmac and hashlib).
const KNOWN_MAC = 'LK6hIXHrlXVxgJBKqdTwU5JKsgWBOa7oiK_GgC7NRjU';
const KNOWN_MAC_UNNAMED = 'nM312J1TdN3NblZakeFhwkEpZntQEEcTfTCIrEUFxgk';
let now = 1_800_000_000_000;

function claims(extra: Partial<VerificationModuleOptions> = {}, apiKey = 'key-a'): VerifiedPhoneClaims {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey, apiSecret: 'secret-secret-secret' },
    handleKey: HANDLE_KEY,
    clock: () => now,
    verifiedPhone: { claimTtlMs: TTL },
    ...extra,
  });
  const store = new MemoryStore({ clock: () => now });
  erasures = new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS);
  return new VerifiedPhoneClaims(options, erasures);
}
/** The erasure index of the last `claims()` made. */
let erasures: SubjectIndex;

const facts = { phoneNumber: '+79161234567', owner: 'u1', verifiedAt: new Date(now - 1000) };

describe('VerifiedPhoneClaims', () => {
  it('a claim is read back by its registration, for its owner, with its test flag', async () => {
    const north = claims({ name: 'north' });
    const token = await north.issue({ ...facts, test: true });
    await expect(north.read(token, 'u1')).resolves.toMatchObject({
      phoneNumber: facts.phoneNumber,
      test: true,
    });
    await expect(north.read(await north.issue(facts), 'u1')).resolves.toMatchObject({ test: false });
    await expect(north.read(token, 'u2')).resolves.toBeNull();
  });

  it('one handleKey: another name, or the same name on another API key, reads the claim as none', async () => {
    const token = await claims({ name: 'north' }).issue(facts);
    await expect(claims({ name: 'south' }).read(token, 'u1')).resolves.toBeNull();
    await expect(claims({ name: 'north' }, 'key-b').read(token, 'u1')).resolves.toBeNull();
    await expect(claims({}).read(token, 'u1')).resolves.toBeNull();
    await expect(claims({ name: 'north' }).read(token, 'u1')).resolves.not.toBeNull();
  });

  // The audience and the registration-bound key each refuse a foreign claim on their own: each test
  // forges a claim that only one of the two can tell apart (a bug in either is not masked by the other).
  describe('audience and key, each in force alone (two registrations, one handleKey)', () => {
    const registrationOf = (name: string) => claimRegistration({ name, api: { apiKey: 'key-a' } as never });
    const bodyOf = (token: string) =>
      JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
    /** A claim of `body` signed with the key of registration `name`. */
    const forged = (body: Record<string, unknown>, name: string) => {
      const encoded = Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
      return `vpc1.${encoded}.${claimMac(claimKey(HANDLE_KEY, registrationOf(name)), encoded)}`;
    };

    it("the control: south's body signed with south's key is read by south", async () => {
      const south = claims({ name: 'south' });
      const body = bodyOf(await south.issue(facts));
      await expect(south.read(forged(body, 'south'), 'u1')).resolves.toMatchObject({
        phoneNumber: facts.phoneNumber,
      });
    });

    it("audience alone: north's claim signed with south's key is refused by south for its aud", async () => {
      const north = bodyOf(await claims({ name: 'north' }).issue(facts));
      await expect(claims({ name: 'south' }).read(forged(north, 'south'), 'u1')).resolves.toBeNull();
    });

    it("key alone: a claim naming south's aud, signed with north's key, is refused by south", async () => {
      const south = claims({ name: 'south' });
      const aud = bodyOf(await south.issue(facts)).aud;
      const north = bodyOf(await claims({ name: 'north' }).issue(facts));
      await expect(south.read(forged({ ...north, aud }, 'north'), 'u1')).resolves.toBeNull();
    });
  });

  // Each field a claim carries is checked even under a good signature: a body of another shape (an older
  // writer, a key shared by mistake) reads as none, never as a claim with a missing owner or expiry.
  describe('a correctly signed body of the wrong shape reads as none', () => {
    const registration = claimRegistration({ name: undefined, api: { apiKey: 'key-a' } as never });
    const sign = (body: Record<string, unknown> | string) => {
      const json = typeof body === 'string' ? body : JSON.stringify(body);
      const encoded = Buffer.from(json, 'utf8').toString('base64url');
      return `vpc1.${encoded}.${claimMac(claimKey(HANDLE_KEY, registration), encoded)}`;
    };
    const good = async () =>
      JSON.parse(
        Buffer.from(
          (await claims().issue({ ...facts, purpose: 'login' })).split('.')[1]!,
          'base64url',
        ).toString('utf8'),
      ) as Record<string, unknown>;

    it('the control: the issued body, signed again, is read with every field', async () => {
      await expect(claims().read(sign(await good()), 'u1')).resolves.toStrictEqual({
        phoneNumber: facts.phoneNumber,
        owner: 'u1',
        verifiedAt: facts.verifiedAt,
        test: false,
        expiresAt: new Date(now + TTL),
        purpose: 'login',
      });
    });

    it.each([
      ['n a number', { n: 79161234567 }],
      ['o a number', { o: 7 }],
      ['o missing', { o: undefined }],
      ['va a string', { va: 'yesterday' }],
      ['va missing', { va: undefined }],
      ['exp a string', { exp: String(now + TTL) }],
      ['exp missing', { exp: undefined }],
      ['aud a number', { aud: 1 }],
      ['t a string', { t: 'false' }],
      ['t missing', { t: undefined }],
      ['p a number', { p: 1 }],
    ])('%s', async (_name, change) => {
      await expect(claims().read(sign({ ...(await good()), ...change }), 'u1')).resolves.toBeNull();
    });

    it('a body that is not JSON, and JSON that is not an object', async () => {
      await expect(claims().read(sign('{"n":'), 'u1')).resolves.toBeNull();
      await expect(claims().read(sign('null'), 'u1')).resolves.toBeNull();
    });

    it('a claim is at most 1,024 characters, even when signed', async () => {
      const body = await good();
      const padded = (total: number) => {
        for (let pad = 0; ; pad++) {
          const token = sign({ ...body, x: 'a'.repeat(pad) });
          if (token.length >= total) return token;
        }
      };
      const longest = padded(1024);
      const over = padded(1025);
      expect([longest.length, over.length]).toStrictEqual([1024, 1025]);
      await expect(claims().read(longest, 'u1')).resolves.not.toBeNull();
      await expect(claims().read(over, 'u1')).resolves.toBeNull();
    });

    it('its frame: the prefix, three parts, base64url in both', async () => {
      const token = sign(await good());
      const [, encoded, mac] = token.split('.');
      const reader = claims();
      await expect(reader.read(`vpc2.${encoded}.${mac}`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`${token}.x`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`vpc1..${mac}`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`vpc1.${encoded}.`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`vpc1.${encoded}`, 'u1')).resolves.toBeNull();
      // Base64 (not url) characters, with the MAC computed over them: refused before the MAC.
      const plain = Buffer.from(JSON.stringify(await good()), 'utf8').toString('base64');
      const key = claimKey(HANDLE_KEY, registration);
      await expect(reader.read(`vpc1.${plain}.${claimMac(key, plain)}`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`vpc1.${encoded}.${mac}=`, 'u1')).resolves.toBeNull();
      // A character outside the alphabet, which the decoder would skip, at the start: still refused.
      const starred = `*${encoded}`;
      await expect(reader.read(`vpc1.${starred}.${claimMac(key, starred)}`, 'u1')).resolves.toBeNull();
      await expect(reader.read(`vpc1.${encoded}.*${mac}`, 'u1')).resolves.toBeNull();
      await expect(reader.read(42, 'u1')).resolves.toBeNull();
      // A MAC one byte short of the right one.
      await expect(reader.read(`vpc1.${encoded}.${mac!.slice(0, -3)}`, 'u1')).resolves.toBeNull();
    });
  });

  it('a registration without an owner resolver: its claims name no owner and open only for no owner', async () => {
    const reader = claims();
    const token = await reader.issue({ ...facts, owner: undefined });
    await expect(reader.read(token, undefined)).resolves.toMatchObject({
      phoneNumber: facts.phoneNumber,
      owner: undefined,
    });
    await expect(reader.read(token, 'u1')).resolves.toBeNull();
    await expect(reader.read(await reader.issue(facts), undefined)).resolves.toBeNull();
  });

  it('an erasure of the number or the owner refuses what was verified up to its moment, not a verification after it', async () => {
    const reader = claims();
    const atErasure = await reader.issue({ ...facts, verifiedAt: new Date(now) });
    const after = await reader.issue({ ...facts, verifiedAt: new Date(now + 1) });
    await erasures.markForgotten({ phoneNumber: facts.phoneNumber }, now, RECORD_RETENTION_MS);
    await expect(reader.read(atErasure, 'u1')).resolves.toBeNull();
    await expect(reader.read(after, 'u1')).resolves.not.toBeNull();
    // The owner's erasure, on another registration's index: the same rule for that owner's claims.
    const other = claims();
    const owned = await other.issue({ ...facts, verifiedAt: new Date(now - 1) });
    const later = await other.issue({ ...facts, verifiedAt: new Date(now + 1) });
    await expect(other.read(owned, 'u1')).resolves.not.toBeNull();
    await erasures.markForgotten({ owner: 'u1' }, now, RECORD_RETENTION_MS);
    await expect(other.read(owned, 'u1')).resolves.toBeNull();
    await expect(other.read(later, 'u1')).resolves.not.toBeNull();
  });

  it('the claim key is fixed for a registration and handle key: claims issued before a deploy open after it', () => {
    // Known answer: a change of the derivation (salt, label, length) would refuse every claim in flight.
    const key = claimKey(HANDLE_KEY, claimRegistration({ name: 'north', api: { apiKey: 'key-a' } as never }));
    expect(claimMac(key, 'eyJuIjoiKzc5MTYxMjM0NTY3In0')).toBe(KNOWN_MAC);
    // A registration without a name: its label's name part is empty.
    const unnamed = claimKey(
      HANDLE_KEY,
      claimRegistration({ name: undefined, api: { apiKey: 'key-a' } as never }),
    );
    expect(claimMac(unnamed, 'eyJuIjoiKzc5MTYxMjM0NTY3In0')).toBe(KNOWN_MAC_UNNAMED);
  });

  it('accepted until one millisecond before its end', async () => {
    const reader = claims();
    const token = await reader.issue(facts);
    now += TTL - 1;
    await expect(reader.read(token, 'u1')).resolves.not.toBeNull();
    now += 1;
    await expect(reader.read(token, 'u1')).resolves.toBeNull();
  });
});
