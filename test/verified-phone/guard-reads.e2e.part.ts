/**
 * The guard attacked: a guarded route hammered costs the API a bounded number of reads (a session
 * seen verified is answered from its record; a pending one's reads are shared and cached per poll
 * interval, and metered per owner), and a verification whose time the API does not give passes a
 * `within` route for `within` from the moment the module first saw it, never longer, even after the
 * app restarts on the same store; one whose time is unknown passes none, by its id or its claim.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import {
  as,
  bootGuardHost,
  burst,
  storeFor,
  withoutVerifiedAt,
  WITHIN_MS,
  type Account,
  type StoreKind,
} from './guard-host.js';

const GETS = 'GET /v1/verify/:id';
const CASES: [Platform, StoreKind][] = PLATFORMS.flatMap(
  (p) =>
    [
      [p, 'memory'],
      [p, 'redis'],
    ] as [Platform, StoreKind][],
);

let serial = 0;
const phoneNumber = () =>
  `+7916444${String(process.pid % 100).padStart(2, '0')}${String(++serial % 100).padStart(2, '0')}`;

describe.each(CASES)('the guard under attack (%s, %s store)', (platform, storeKind) => {
  const suite = sandboxSuite();
  let store: ReturnType<typeof storeFor> | undefined;
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
  });

  async function host(account: Account, baseUrl?: string) {
    store ??= storeFor(storeKind, suite.sb);
    suite.host = await bootGuardHost(platform, suite.sb, account, { store, baseUrl });
    return suite.host;
  }

  async function start(user: string, method: string, phone = phoneNumber()) {
    const started = await call(
      suite.host!.url,
      'POST',
      '/verification/start',
      { phone_number: phone, method },
      as(user),
    );
    expect(started.status).toBe(201);
    const [session] = suite.sb.sessionsFor(phone);
    return { id: String(started.body.verification_id), phone, requestId: session!.request_id };
  }

  const guarded = (route: string, user: string, id: string) =>
    call(suite.host!.url, 'POST', route, {}, as(user, { 'x-verification-id': id }));

  it('300 requests to a guarded route: none reaches the API for a verified session, one for a pending one', async () => {
    await host(await suite.sb.createAccount({ balance: 100 }));
    const done = await start('alice', 'sms');
    await suite.sb.deliver(done.requestId);
    const code = String(suite.sb.getSession(done.requestId)!.code);
    const checked = await call(
      suite.host!.url,
      'POST',
      '/verification/check',
      { verification_id: done.id, code },
      as('alice'),
    );
    expect(checked.body.verified).toBe(true);

    let before = suite.sb.requestCount(GETS);
    const alice = as('alice', { 'x-verification-id': done.id });
    const passed = await burst(300, 50, `${suite.host!.url}/account/phone`, alice);
    expect(passed.every((status) => status === 201)).toBe(true);
    // getVerifiedPhone, the host's own check, answers it from the record too.
    const service = suite.host!.app.get(VerificationService);
    for (let i = 0; i < 50; i++) expect(await service.getVerifiedPhone(done.id, 'alice')).toBe(done.phone);
    expect(suite.sb.requestCount(GETS) - before).toBe(0);

    const pending = await start('alice', 'sms');
    before = suite.sb.requestCount(GETS);
    const waiting = as('alice', { 'x-verification-id': pending.id });
    const refused = await burst(300, 50, `${suite.host!.url}/account/phone`, waiting);
    expect(refused.every((status) => status === 409)).toBe(true);
    // The sandbox clock stands still: one poll interval, one read, shared by every request in it.
    expect(suite.sb.requestCount(GETS) - before).toBe(1);
  });

  it('one owner presenting many pending verifications spends only their own meter; another owner is still read fresh', async () => {
    await host(await suite.sb.createAccount({ balance: 100 }));
    const many = GUARD_READS_PER_OWNER.points + 5;
    const sessions: Awaited<ReturnType<typeof start>>[] = [];
    for (let i = 0; i < many; i++) sessions.push(await start('mallory', 'reverse_flash_call'));
    const bob = await start('bob', 'reverse_flash_call');
    await suite.sb.call(bob.requestId, bob.phone);

    const before = suite.sb.requestCount(GETS);
    const answers = await Promise.all(sessions.map((s) => guarded('/account/phone', 'mallory', s.id)));
    expect(answers.every((a) => a.status === 409)).toBe(true);
    // Refreshes of stored records take at most `refreshes` of the window (the rest is kept for rebuilds).
    expect(suite.sb.requestCount(GETS) - before).toBe(GUARD_READS_PER_OWNER.refreshes);
    // Past the meter nothing more goes upstream for mallory, whatever she presents again.
    const again = as('mallory', { 'x-verification-id': sessions[0]!.id });
    await burst(many, many, `${suite.host!.url}/account/phone`, again);
    expect(suite.sb.requestCount(GETS) - before).toBe(GUARD_READS_PER_OWNER.refreshes);

    // bob's verification, verified in the API meanwhile, is read for him: his meter is his own.
    const ok = await guarded('/account/phone', 'bob', bob.id);
    expect(ok.status).toBe(201);
    expect(ok.body.phone).toBe(bob.phone);
    expect(suite.sb.requestCount(GETS) - before).toBe(GUARD_READS_PER_OWNER.refreshes + 1);
  });

  it("an owner's guard reads are metered apart from her status route's: past the status meter's refreshes at the guard, her status poll is still read fresh", async () => {
    // The status route's meter is protection's (limits on, as a host's defaults are).
    store ??= storeFor(storeKind, suite.sb);
    const account = await suite.sb.createAccount({ balance: 100 });
    suite.host = await bootGuardHost(platform, suite.sb, account, { store, limits: {} });
    const presented: Awaited<ReturnType<typeof start>>[] = [];
    for (let i = 0; i <= STATUS_READS_PER_CALLER.refreshes; i++)
      presented.push(await start('mallory', 'reverse_flash_call'));
    const mine = await start('mallory', 'reverse_flash_call');
    await suite.sb.call(mine.requestId, mine.phone);

    const before = suite.sb.requestCount(GETS);
    for (const s of presented) expect((await guarded('/account/phone', 'mallory', s.id)).status).toBe(409);
    // More refreshes than the status route's meter allows a window, all within the guard's own.
    expect(suite.sb.requestCount(GETS) - before).toBe(presented.length);
    // Her status route's meter is untouched: the verification, verified in the API meanwhile, is read fresh.
    const status = await call(
      suite.host!.url,
      'GET',
      `/verification/status/${mine.id}`,
      undefined,
      as('mallory'),
    );
    expect([status.status, status.body.status]).toEqual([200, 'verified']);
    expect(suite.sb.requestCount(GETS) - before).toBe(presented.length + 1);
  });

  it('one caller hammering one pending verification spends no meter past its one shared read: the same owner’s other verification is still read fresh', async () => {
    await host(await suite.sb.createAccount({ balance: 100 }));
    const hammered = await start('', 'reverse_flash_call');
    const victim = await start('', 'reverse_flash_call');
    await suite.sb.call(victim.requestId, victim.phone);
    const before = suite.sb.requestCount(GETS);
    const url = `${suite.host!.url}/account/phone`;
    const refused = await burst(
      3 * GUARD_READS_PER_OWNER.points,
      10,
      url,
      as('', { 'x-verification-id': hammered.id }),
    );
    expect(refused.every((status) => status === 409)).toBe(true);
    // One poll interval, one read of the hammered session; the victim's verification is read for them.
    expect(suite.sb.requestCount(GETS) - before).toBe(1);
    const ok = await guarded('/account/phone', '', victim.id);
    expect(ok.body.phone).toBe(victim.phone);
    expect(suite.sb.requestCount(GETS) - before).toBe(2);
  });

  it('without verified_at from the API, a record the store lost and rebuilt has no known time: a `within` route refuses it, and the claim issued for it', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    const proxy = await withoutVerifiedAt(suite.sb.url);
    closers.push(() => proxy.close());
    await host(account, proxy.url);
    const s = await start('dave', 'reverse_flash_call');
    await suite.sb.call(s.requestId, s.phone);
    await suite.sb.advance(WITHIN_MS + 1);
    // A new app on a new store (a MemoryStore's restart): the record is rebuilt from the API.
    await suite.host!.close();
    if (store !== undefined && 'close' in store) await (store as VerificationStore).close();
    store = undefined;
    await host(account, proxy.url);
    expect((await guarded('/account/payout', 'dave', s.id)).body).toMatchObject({
      status: 403,
      reason: 'stale',
    });
    const any = await guarded('/account/phone', 'dave', s.id);
    expect(any.body.phone).toBe(s.phone);
    // The claim the route without an age limit issued states no time either: `within` refuses it too.
    const withClaim = await call(
      suite.host!.url,
      'POST',
      '/account/payout',
      {},
      as('dave', { 'x-verified-phone-claim': String(any.body.claim) }),
    );
    expect(withClaim.body).toMatchObject({ status: 403, reason: 'stale' });
  });

  it('without verified_at from the API, `within` counts from the first time the module saw it verified (at most `within` old, to the millisecond), across a restart', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    const proxy = await withoutVerifiedAt(suite.sb.url);
    closers.push(() => proxy.close());
    await host(account, proxy.url);
    const s = await start('carol', 'reverse_flash_call');
    await suite.sb.call(s.requestId, s.phone);

    const seen = suite.sb.now();
    const first = await guarded('/account/payout', 'carol', s.id);
    expect(first.status).toBe(201);
    expect(first.body.verified_at).toBe(new Date(seen).toISOString());
    const claim = String(first.body.claim);
    const withClaim = () =>
      call(suite.host!.url, 'POST', '/account/payout', {}, as('carol', { 'x-verified-phone-claim': claim }));

    // `within` is "at most this old": a tick before it and exactly at it pass, a tick after is stale.
    await suite.sb.advance(WITHIN_MS - 1);
    expect((await guarded('/account/payout', 'carol', s.id)).status).toBe(201);
    expect((await withClaim()).status).toBe(201);
    await suite.sb.advance(1);
    expect((await guarded('/account/payout', 'carol', s.id)).status).toBe(201);
    expect((await withClaim()).status).toBe(201);

    await suite.sb.advance(1);
    for (const late of [await guarded('/account/payout', 'carol', s.id), await withClaim()])
      expect(late.body).toMatchObject({
        status: 403,
        error_code: 'phone_verification_required',
        reason: 'stale',
      });
    // The route without an age limit still takes the verification.
    expect((await guarded('/account/phone', 'carol', s.id)).status).toBe(201);

    // A new app on the same store: the time the first one saw stands.
    await suite.host!.close();
    await host(account, proxy.url);
    const restarted = await guarded('/account/payout', 'carol', s.id);
    expect(restarted.body).toMatchObject({ status: 403, reason: 'stale' });
    await suite.sb.advance(WITHIN_MS);
    expect((await guarded('/account/payout', 'carol', s.id)).body).toMatchObject({ reason: 'stale' });
  });
});
