import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import type { VerificationModuleOptions } from '../options/verification.options.js';
import { RECORD_RETENTION_MS } from '../sessions/session-record.repository.js';
import { SubjectIndex } from '../sessions/subject-index.js';
import { MemoryStore } from '../store/memory.store.js';
import { claimKey, claimMac, claimRegistration, VerifiedPhoneClaims } from './verified-phone-claims.js';

const HANDLE_KEY = 'one-handle-key-for-every-registration-0123';
const TTL = 600_000;
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
  return new VerifiedPhoneClaims(options, new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS));
}

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

  it('accepted until one millisecond before its end', async () => {
    const reader = claims();
    const token = await reader.issue(facts);
    now += TTL - 1;
    await expect(reader.read(token, 'u1')).resolves.not.toBeNull();
    now += 1;
    await expect(reader.read(token, 'u1')).resolves.toBeNull();
  });
});
