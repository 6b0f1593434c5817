/**
 * A change of an owner's number over real HTTP against the sandbox, on Express (MemoryStore) and
 * Fastify (Redis): the new number verified for `change_phone` by this owner is bound by the host's
 * rebind; what the owner verified of the old number no longer opens the guard (verification_id or
 * claim) nor `getVerifiedPhone`; `verification.phone_changed` carries both numbers masked; the cooldown
 * holds to its bound (one tick before, one after); a failing rebind leaves nothing behind; `confirmOld`
 * and the step-up guard in front of the route confirm from the old number.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, type Platform } from '../support/verification-app.js';
import type { StoreKind } from '../verified-phone/guard-host.js';
import { bootPhoneChangeHost, driver, phoneNumber, type PhoneChangeHost } from './phone-change-host.js';

const COOLDOWN_MS = 120_000;
const CASES: [Platform, StoreKind][] = [
  ['express', 'memory'],
  ['fastify', 'redis'],
];

describe.each(CASES)('a change of phone (%s, %s store)', (platform, storeKind) => {
  const suite = sandboxSuite();
  let host: PhoneChangeHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });
  const boot = async (extra: Parameters<typeof bootPhoneChangeHost>[3] = {}) => {
    host = await bootPhoneChangeHost(platform, suite.sb, storeKind, {
      phoneChange: { cooldownMs: COOLDOWN_MS },
      ...extra,
    });
    return host;
  };
  const d = driver(
    () => suite.sb,
    () => host!,
  );
  const mask = (e164: string) => `${e164.slice(0, 2)}${'*'.repeat(e164.length - 6)}${e164.slice(-4)}`;

  it('binds the new number; the old one no longer opens anything of this owner; the event carries both masked', async () => {
    const { users, events } = await boot();
    const [old, next] = [phoneNumber(), phoneNumber()];
    users.phones.set('alice', old);
    const oldId = await d.verified('alice', old, 'login');
    const oldClaim = String((await d.whoami('alice', { id: oldId })).body.claim);
    const newId = await d.verified('alice', next, 'change_phone');

    const changed = await d.change('alice', { verification_id: newId });
    expect(changed.status).toBe(200);
    const now = suite.sb.now();
    expect(changed.body).toEqual({
      changed_at: new Date(now).toISOString(),
      next_change_at: new Date(now + COOLDOWN_MS).toISOString(),
    });
    expect(users.phones.get('alice')).toBe(next);
    expect(users.rebinds).toEqual([
      { owner: 'alice', oldPhoneNumber: old, newPhoneNumber: next, verifiedAt: expect.any(Date) },
    ]);
    expect(events).toEqual([
      {
        event: 'verification.phone_changed',
        owner: 'alice',
        oldPhoneNumberMasked: mask(old),
        newPhoneNumberMasked: mask(next),
        changedAt: new Date(now),
      },
    ]);
    expect(JSON.stringify(events)).not.toContain(old.slice(2, -4));

    // The old number's verification and claim: refused as unknown, for the guard and the service alike.
    expect((await d.whoami('alice', { id: oldId })).body).toMatchObject({ status: 403, reason: 'unknown' });
    expect((await d.whoami('alice', { claim: oldClaim })).body).toMatchObject({ reason: 'invalid_claim' });
    const service = host!.app.app.get(VerificationService);
    expect(await service.getVerifiedPhone(oldId, 'alice')).toBeNull();
    // The new number's opens it; so does the old number verified again, after the change (the host decides).
    expect((await d.whoami('alice', { id: newId })).body).toMatchObject({ phone: next });
    // At the change's own instant it is still "before" (refused); one tick after it counts again.
    const sameInstant = await d.verified('alice', old, 'login');
    expect((await d.whoami('alice', { id: sameInstant })).body).toMatchObject({ reason: 'unknown' });
    await suite.sb.advance(1);
    const again = await d.verified('alice', old, 'login');
    expect((await d.whoami('alice', { id: again })).body).toMatchObject({ phone: old });
  });

  it("the old number's verification stays refused past every claim's lifetime, while its record is kept", async () => {
    const { users } = await boot();
    const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('kim', a);
    const oldId = await d.verified('kim', a, 'login');
    const otherId = await d.verified('kim', c, 'login');
    expect(
      (await d.change('kim', { verification_id: await d.verified('kim', b, 'change_phone') })).status,
    ).toBe(200);
    // Past the longest claim lifetime (the default's 10 minutes) and a minute's slack: the record of the
    // old number's verification is still kept, and still refused; another number's still opens.
    await suite.sb.advance(11 * 60_000 + 1);
    expect((await d.whoami('kim', { id: oldId })).body).toMatchObject({ status: 403, reason: 'unknown' });
    expect(await host!.app.app.get(VerificationService).getVerifiedPhone(oldId, 'kim')).toBeNull();
    expect((await d.whoami('kim', { id: otherId })).body).toMatchObject({ phone: c });
  });

  it('a verification recorded without its time (an older version) no longer opens once its number left', async () => {
    const { users } = await boot();
    const [a, b] = [phoneNumber(), phoneNumber()];
    users.phones.set('lev', a);
    const oldId = await d.verified('lev', a, 'login');
    expect((await d.whoami('lev', { id: oldId })).body).toMatchObject({ phone: a });
    const records = host!.app.app.get(SessionRecordRepository, { strict: false });
    await records.save({ ...(await records.get(suite.sb.sessionsFor(a)[0]!.request_id))!, verifiedAt: null });
    expect(
      (await d.change('lev', { verification_id: await d.verified('lev', b, 'change_phone') })).status,
    ).toBe(200);
    expect((await d.whoami('lev', { id: oldId })).body).toMatchObject({ status: 403, reason: 'unknown' });
    expect(await host!.app.app.get(VerificationService).getVerifiedPhone(oldId, 'lev')).toBeNull();
  });

  it("erasing the owner forgets that the old number left the account; the old number's claim stays refused", async () => {
    const { users, dump } = await boot();
    const [a, b] = [phoneNumber(), phoneNumber()];
    users.phones.set('olga', a);
    const oldClaim = String(
      (await d.whoami('olga', { id: await d.verified('olga', a, 'login') })).body.claim,
    );
    expect(
      (await d.change('olga', { verification_id: await d.verified('olga', b, 'change_phone') })).status,
    ).toBe(200);
    expect((await dump()).filter((line) => line.includes(':revoked:'))).toHaveLength(1);
    await host!.app.app.get(VerificationErasure).forget({ owner: 'olga' });
    expect((await dump()).filter((line) => line.includes(':revoked:'))).toEqual([]);
    expect((await d.whoami('olga', { claim: oldClaim })).status).toBe(403);
  });

  it('a number erased before it verified, then taken off the account: the later of the two counts, so its verification no longer opens', async () => {
    const { users } = await boot();
    const [a, b] = [phoneNumber(), phoneNumber()];
    // The number's own erasure, before the owner verified it: what the owner verifies after counts.
    await host!.app.app.get(VerificationErasure).forget({ phoneNumber: a });
    await suite.sb.advance(1000);
    users.phones.set('nina', a);
    const oldId = await d.verified('nina', a, 'login');
    expect((await d.whoami('nina', { id: oldId })).body).toMatchObject({ phone: a });
    const oldClaim = String((await d.whoami('nina', { id: oldId })).body.claim);
    await suite.sb.advance(1000);
    // Then the number leaves the account: that later mark is what its verification is weighed against.
    expect(
      (await d.change('nina', { verification_id: await d.verified('nina', b, 'change_phone') })).status,
    ).toBe(200);
    expect((await d.whoami('nina', { id: oldId })).body).toMatchObject({ status: 403, reason: 'unknown' });
    expect((await d.whoami('nina', { claim: oldClaim })).body).toMatchObject({ reason: 'invalid_claim' });
    expect(await host!.app.app.get(VerificationService).getVerifiedPhone(oldId, 'nina')).toBeNull();
  });

  it('an owner without a number gets one; the event says it had none', async () => {
    const { users, events } = await boot();
    const next = phoneNumber();
    const changed = await d.change('nora', {
      verification_id: await d.verified('nora', next, 'change_phone'),
    });
    expect(changed.status).toBe(200);
    expect(users.phones.get('nora')).toBe(next);
    expect(events).toMatchObject([{ owner: 'nora', oldPhoneNumberMasked: null }]);
  });

  it('no "verified" carried over: another purpose, a stale one, one from before the number left, are refused', async () => {
    const { users, events } = await boot({ purposes: { change_phone: { claimTtlMs: 300_000 } } });
    const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('bea', a);
    const refused = async (id: string) => (await d.change('bea', { verification_id: id })).body;

    // A login (or no purpose) verification of the new number is no change's.
    expect(await refused(await d.verified('bea', b, 'login'))).toMatchObject({
      status: 403,
      error_code: 'phone_verification_required',
      reason: 'purpose',
    });
    expect(await refused(await d.verified('bea', b))).toMatchObject({ reason: 'purpose' });
    // Not a verification of this owner's (or of anyone's): 404, as on the client routes.
    expect(await refused('nonsense')).toMatchObject({ status: 404, error_code: 'not_found' });
    // The purpose's claim lifetime bounds the verification's age: one tick past it stale, at it taken.
    const old = await d.verified('bea', b, 'change_phone');
    await suite.sb.advance(1);
    const toB = await d.verified('bea', b, 'change_phone');
    await suite.sb.advance(300_000);
    expect(await refused(old)).toMatchObject({ reason: 'stale' });
    expect(users.rebinds).toEqual([]);

    // a → b, then b → c: b's change verification from before b left the account opens nothing now.
    expect((await d.change('bea', { verification_id: toB })).status).toBe(200);
    await suite.sb.advance(COOLDOWN_MS);
    const keptForLater = await d.verified('bea', c, 'change_phone');
    const toC = await d.verified('bea', c, 'change_phone');
    expect((await d.change('bea', { verification_id: toC })).status).toBe(200);
    await suite.sb.advance(COOLDOWN_MS);
    expect(await refused(toB)).toMatchObject({ status: 404, error_code: 'not_found' });
    // The current number again: answered as a change (as a number another account holds is, so a retry
    // tells nothing), with the cooldown taken, but no rebind and no event.
    const rebinds = users.rebinds.length;
    expect((await d.change('bea', { verification_id: keptForLater })).status).toBe(200);
    expect(await refused(keptForLater)).toMatchObject({ status: 429, reason: 'phone_change_cooldown' });
    expect(users.rebinds).toHaveLength(rebinds);
    expect(users.phones.get('bea')).toBe(c);
    expect(events).toHaveLength(2);
  });

  it('a pending verification of the new number is 409 phone_not_verified, and takes nothing', async () => {
    const { users } = await boot();
    users.phones.set('cleo', phoneNumber());
    const next = phoneNumber();
    const pending = await call(
      host!.app.url,
      'POST',
      '/verification/start',
      { phone_number: next, method: 'sms', purpose: 'change_phone' },
      { 'x-user': 'cleo' },
    );
    const answer = await d.change('cleo', { verification_id: String(pending.body.verification_id) });
    expect(answer.status).toBe(409);
    expect(answer.body).toMatchObject({ error_code: 'phone_not_verified', verification_status: 'sent' });
    // Nothing held: a verified one changes right away.
    expect(
      (await d.change('cleo', { verification_id: await d.verified('cleo', next, 'change_phone') })).status,
    ).toBe(200);
  });

  it('one change per cooldown per owner: refused one tick before its bound (Retry-After), taken at it', async () => {
    const { users } = await boot();
    const [a, b, c] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('dora', a);
    const t0 = suite.sb.now();
    expect(
      (await d.change('dora', { verification_id: await d.verified('dora', b, 'change_phone') })).status,
    ).toBe(200);
    await suite.sb.advance(COOLDOWN_MS - 1_000);
    const toC = await d.verified('dora', c, 'change_phone');
    await suite.sb.advance(999);
    expect(suite.sb.now()).toBe(t0 + COOLDOWN_MS - 1);
    const early = await d.change('dora', { verification_id: toC });
    expect(early.status).toBe(429);
    expect(early.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(early.headers.get('retry-after')).toBe('1');
    expect(early.body).toMatchObject({ error_code: 'rate_limit_exceeded', reason: 'phone_change_cooldown' });
    expect(users.phones.get('dora')).toBe(b);
    // Another owner is not held by dora's change.
    users.phones.set('emil', phoneNumber());
    expect(
      (await d.change('emil', { verification_id: await d.verified('emil', phoneNumber(), 'change_phone') }))
        .status,
    ).toBe(200);

    await suite.sb.advance(1);
    const onTime = await d.change('dora', { verification_id: toC });
    expect(onTime.status).toBe(200);
    expect(users.phones.get('dora')).toBe(c);
  });

  it("a failing rebind leaves nothing: the old number's claims open, no cooldown, no event; the host's error as it is", async () => {
    const { users, events, dump } = await boot();
    const [a, b] = [phoneNumber(), phoneNumber()];
    users.phones.set('finn', a);
    const oldClaim = String(
      (await d.whoami('finn', { id: await d.verified('finn', a, 'login') })).body.claim,
    );
    const toB = await d.verified('finn', b, 'change_phone');
    users.failNext = true;
    const failed = await d.change('finn', { verification_id: toB });
    expect(failed.status).toBe(500);
    expect(failed.text).not.toContain(b.slice(2));
    expect(users.phones.get('finn')).toBe(a);
    expect(events).toEqual([]);
    expect((await d.whoami('finn', { claim: oldClaim })).body).toMatchObject({ phone: a });
    // The number's revocation, undone, is gone from the store: none was there before it.
    expect((await dump()).filter((line) => line.includes(':revoked:'))).toEqual([]);
    // No cooldown was kept: the same verification changes the number now.
    expect((await d.change('finn', { verification_id: toB })).status).toBe(200);
    expect((await d.whoami('finn', { claim: oldClaim })).status).toBe(403);
  });

  it('confirmOld: a recent verification or claim of the current number, this owner’s, is required', async () => {
    const { users } = await boot({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    const [a, b, other] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('gus', a);
    const toB = await d.verified('gus', b, 'change_phone');
    const refusedWith = async (old_confirmation?: string) =>
      (await d.change('gus', { verification_id: toB, ...(old_confirmation ? { old_confirmation } : {}) }))
        .body;
    expect(await refusedWith()).toMatchObject({ status: 403, reason: 'old_number' });
    // Another number's, a login's of the old number, another owner's: none confirms.
    expect(await refusedWith(await d.verified('gus', other, 'change_phone'))).toMatchObject({
      reason: 'old_number',
    });
    expect(await refusedWith(await d.verified('gus', a, 'login'))).toMatchObject({ reason: 'old_number' });
    expect(await refusedWith(await d.verified('hal', a, 'change_phone'))).toMatchObject({
      reason: 'old_number',
    });
    expect(users.rebinds).toEqual([]);
    // The old number verified by this owner for the change: the change goes through.
    const confirmed = await d.change('gus', {
      verification_id: toB,
      old_confirmation: await d.verified('gus', a, 'change_phone'),
    });
    expect(confirmed.status).toBe(200);
    expect(users.phones.get('gus')).toBe(b);
  });

  it('without confirmOld, a confirmation the caller gives is checked all the same: a wrong one changes nothing', async () => {
    const { users, events } = await boot();
    const [a, b, other] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('kai', a);
    const toB = await d.verified('kai', b, 'change_phone');
    const withConfirmation = async (old_confirmation: string) =>
      await d.change('kai', { verification_id: toB, old_confirmation });
    // Another number's verification, a login of the current one, a forged claim: each 403 old_number.
    for (const wrong of [
      await d.verified('kai', other, 'change_phone'),
      await d.verified('kai', a, 'login'),
      'vpc1.forged',
    ])
      expect((await withConfirmation(wrong)).body).toMatchObject({ status: 403, reason: 'old_number' });
    expect(users.rebinds).toEqual([]);
    expect(events).toEqual([]);
    // The current number's own confirmation: changed.
    const confirmed = await withConfirmation(await d.verified('kai', a, 'change_phone'));
    expect(confirmed.status).toBe(200);
    expect(users.phones.get('kai')).toBe(b);
  });

  it('behind the step-up guard: a step-up of the current number confirms; of another number or purpose it does not', async () => {
    const { users } = await boot({ phoneChange: { cooldownMs: COOLDOWN_MS, confirmOld: true } });
    const [a, b, other] = [phoneNumber(), phoneNumber(), phoneNumber()];
    users.phones.set('ivy', a);
    const toB = await d.verified('ivy', b, 'change_phone');
    const stepped = (headers: Record<string, string>) =>
      d.change('ivy', { verification_id: toB }, headers, '/account/phone/stepped');
    // Without a step-up the guard reads the body's change_phone verification: not a step-up.
    expect((await stepped({})).body).toMatchObject({ status: 403, reason: 'purpose' });
    expect((await stepped({ 'x-verification-id': await d.verified('ivy', a, 'login') })).body).toMatchObject({
      reason: 'purpose',
    });
    // A step-up of another number passes the guard but confirms nothing.
    expect(
      (await stepped({ 'x-verification-id': await d.verified('ivy', other, 'step_up') })).body,
    ).toMatchObject({ reason: 'old_number' });
    // The current number's step-up, by id, confirms; its claim would too.
    const stepUp = await d.verified('ivy', a, 'step_up');
    const claim = String((await d.whoami('ivy', { id: stepUp })).body.claim);
    const done = await stepped({ 'x-verified-phone-claim': claim });
    expect(done.status).toBe(200);
    expect(users.phones.get('ivy')).toBe(b);
    // That step-up was of the number that left: it opens nothing any more.
    expect((await d.whoami('ivy', { claim })).status).toBe(403);
  });
});
