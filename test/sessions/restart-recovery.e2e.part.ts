/**
 * A single instance on the default MemoryStore restarts while verifications are in flight: the new
 * instance has an empty store, but the frontends keep their handles. The status and check routes
 * (and getVerifiedPhone) rebuild each lost record from the handle and `GET /v1/verify/{id}`, the
 * rebuilt record is followed by the reconciler, and each outcome reaches the host's listeners once.
 * A handle that does not open (forged, altered, another owner's) costs no upstream call.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { GONE_SESSION_TTL_MS } from '../../src/sessions/session-refresher.js';
import { RECORD_RETENTION_MS } from '../../src/sessions/session-record.repository.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { apiCheck, drive, eventsOf, reconcilerOf, startHost, startSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';
/** The reconciler's pace with webhooks configured. */
const LAZY_MS = 15_000;

describe.each(ONE_PLATFORM)('a restarted instance on a fresh MemoryStore (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });
  /** Stops an instance (its MemoryStore goes with it). */
  const stop = async (host: TestApp) => {
    hosts.splice(hosts.indexOf(host), 1);
    await host.close();
  };

  /** The same host app, booted again: same API secret, a new MemoryStore, webhooks not reaching it. */
  const boot = async (receiveWebhooks: boolean) => {
    const host = await startHost(platform, sb, { receiveWebhooks });
    hosts.push(host);
    return host;
  };
  const status = (host: TestApp, verificationId: string, owner: string) =>
    call(host.url, 'GET', `/verification/status/${verificationId}`, undefined, { 'x-user': owner });

  it('status and check of a session started before the restart work, and verified is emitted once', async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'sms', 'user-1');
    await stop(before);
    await sb.deliver(s.requestId);

    const after = await boot(false);
    sb.resetRequestCounts();
    const pending = await status(after, s.verificationId, 'user-1');
    expect(pending.status).toBe(200);
    expect(pending.body).toMatchObject({
      verification_id: s.verificationId,
      method: 'sms',
      status: 'delivered',
      awaiting_code: true,
      // The exact length is not in the API's session resource: the spec's bounds.
      code_length_min: 4,
      code_length_max: 8,
    });
    expect(pending.body.phone_number).toMatch(/^\+7\*+\d{4}$/);
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    // The rebuilt record is followed by the reconciler.
    expect(await reconcilerOf(after).pending()).toBe(1);

    const code = sb.getSession(s.requestId)!.code!;
    const checked = await call(
      after.url,
      'POST',
      '/verification/check',
      { verification_id: s.verificationId, code },
      { 'x-user': 'user-1' },
    );
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({ verification_id: s.verificationId, status: 'verified', verified: true });

    expect((await status(after, s.verificationId, 'user-1')).body.status).toBe('verified');
    await sb.advance(LAZY_MS);
    await reconcilerOf(after).runOnce();
    const verified = after.events.filter((e) => e.requestId === s.requestId);
    expect(verified.map((e) => [e.event, e.owner, e.phoneNumber, e.source])).toEqual([
      ['verification.verified', 'user-1', s.phone, 'check'],
    ]);
    expect(await reconcilerOf(after).pending()).toBe(0);
  });

  it("a check as the first request after the restart rebuilds the record for the check's owner: the event names the owner, and the owner's status reads it", async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'sms', 'user-7');
    await stop(before);
    await sb.deliver(s.requestId);

    const after = await boot(false);
    sb.resetRequestCounts();
    const checked = await call(
      after.url,
      'POST',
      '/verification/check',
      { verification_id: s.verificationId, code: sb.getSession(s.requestId)!.code! },
      { 'x-user': 'user-7' },
    );
    expect(checked.body).toEqual({ verification_id: s.verificationId, status: 'verified', verified: true });
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    expect(after.events.filter((e) => e.requestId === s.requestId).map((e) => [e.event, e.owner])).toEqual([
      ['verification.verified', 'user-7'],
    ]);
    expect((await status(after, s.verificationId, 'user-7')).body.status).toBe('verified');
    await expect(
      after.app.get(VerificationService).getVerifiedPhone(s.verificationId, 'user-7'),
    ).resolves.toBe(s.phone);
  });

  it('a session that went terminal while the host was down (webhook missed) emits once when the status route sees it', async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'reverse_flash_call', 'user-2');
    await stop(before);
    await drive(sb, s, 'verified'); // its webhook goes to the stopped host

    const after = await boot(false);
    sb.resetRequestCounts();
    const seen = await status(after, s.verificationId, 'user-2');
    expect(seen.status).toBe(200);
    expect(seen.body).toMatchObject({ status: 'verified', awaiting_code: false });
    expect(typeof seen.body.verified_at).toBe('string');
    for (let i = 0; i < 3; i++) expect((await status(after, s.verificationId, 'user-2')).status).toBe(200);
    await sb.advance(LAZY_MS);
    await reconcilerOf(after).runOnce();
    // One upstream read rebuilt it; later polls of a terminal record ask nothing.
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    expect(eventsOf(after, s.requestId)).toEqual(['verification.verified']);
    expect(after.events.find((e) => e.requestId === s.requestId)?.owner).toBe('user-2');
    expect(await reconcilerOf(after).pending()).toBe(0);
  });

  it('a rebuilt pending record is followed by the reconciler until its outcome is emitted', async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'flash_call', 'user-3');
    await stop(before);
    await sb.deliver(s.requestId); // the missed call rings while the host is down

    const after = await boot(false);
    expect((await status(after, s.verificationId, 'user-3')).body.status).toBe('delivered');
    // The user finishes elsewhere (the host learns it only by polling): the page is closed.
    await apiCheck(sb, s.requestId, sb.getSession(s.requestId)!.code!);
    await sb.advance(LAZY_MS);
    await reconcilerOf(after).runOnce();
    expect(after.events.filter((e) => e.requestId === s.requestId).map((e) => [e.event, e.source])).toEqual([
      ['verification.verified', 'poll'],
    ]);
    expect(await reconcilerOf(after).pending()).toBe(0);
  });

  it('getVerifiedPhone rebuilds the record too, and emits the outcome once', async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'reverse_flash_call', 'user-4');
    await stop(before);
    await drive(sb, s, 'verified');

    const after = await boot(false);
    const service = after.app.get(VerificationService);
    expect(await service.getVerifiedPhone(s.verificationId, 'someone-else')).toBeNull();
    expect(await service.getVerifiedPhone(s.verificationId, 'user-4')).toBe(s.phone);
    expect(await service.getVerifiedPhone(s.verificationId, 'user-4')).toBe(s.phone);
    expect(eventsOf(after, s.requestId)).toEqual(['verification.verified']);
  });

  it('a forged, altered or foreign handle gets 404 without any upstream call; an unknown session 404 with one', async () => {
    const before = await boot(true);
    const s = await startSession(before, sb, 'sms', 'user-5');
    await stop(before);

    const after = await boot(false);
    sb.resetRequestCounts();
    const last = s.verificationId.at(-1) === 'A' ? 'B' : 'A';
    const altered = `${s.verificationId.slice(0, -1)}${last}`;
    const forged = new VerificationHandleCodec('not-the-api-secret').seal(s.requestId, 'user-5');
    for (const [handle, owner] of [
      [s.verificationId, 'user-6'],
      [s.verificationId, undefined],
      [altered, 'user-5'],
      [forged, 'user-5'],
    ] as const) {
      const res = await call(after.url, 'GET', `/verification/status/${handle}`, undefined, {
        ...(owner ? { 'x-user': owner } : {}),
      });
      expect(res.status).toBe(404);
      expect(res.body.error_code).toBe('not_found');
      const check = await call(
        after.url,
        'POST',
        '/verification/check',
        { verification_id: handle, code: '123456' },
        owner ? { 'x-user': owner } : {},
      );
      expect(check.status).toBe(404);
    }
    expect(sb.requestCount()).toBe(0);

    // A handle of this deployment whose session the API does not know: 404, and remembered as unknown.
    const unknown = new VerificationHandleCodec(sb.demoAccount.apiSecret).seal(
      '00000000-0000-4000-8000-000000000000',
      'user-5',
    );
    for (let i = 0; i < 3; i++) {
      const res = await status(after, unknown, 'user-5');
      expect(res.status).toBe(404);
      expect(res.body.error_code).toBe('not_found');
    }
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    expect(after.events).toEqual([]);
  });

  it('a handle past its record’s retention costs one GET, not one per request: 300 polls and stream opens after it ask nothing', async () => {
    const host = await boot(false);
    const s = await startSession(host, sb, 'sms', 'user-7');
    // A day and more later the record is gone from the store (as on any instance, restarted or not).
    await sb.advance(RECORD_RETENTION_MS + 10 * 60_000);
    sb.resetRequestCounts();
    for (let i = 0; i < 300; i++) {
      const res = await status(host, s.verificationId, 'user-7');
      expect(res.status).toBe(404);
    }
    const stream = await call(host.url, 'GET', `/verification/status/${s.verificationId}/events`, undefined, {
      'x-user': 'user-7',
    });
    expect(stream.status).toBe(404);
    expect(await host.app.get(VerificationService).getVerifiedPhone(s.verificationId, 'user-7')).toBeNull();
    expect(sb.requestCount(GET_SESSION)).toBe(1);
    // Remembered for a day, then asked once more.
    await sb.advance(GONE_SESSION_TTL_MS + 1);
    for (let i = 0; i < 3; i++) expect((await status(host, s.verificationId, 'user-7')).status).toBe(404);
    expect(sb.requestCount(GET_SESSION)).toBe(2);
  });

  it('a handle rebuilt on a restarted instance lives as long as its record would: a tick before expiry + retention it answers, at that bound it is 404', async () => {
    const before = await boot(false);
    const early = await startSession(before, sb, 'sms', 'user-9');
    const atBound = await startSession(before, sb, 'sms', 'user-9');
    await stop(before);
    const ends = (id: string) => Date.parse(sb.getSession(id)!.expires_at) + RECORD_RETENTION_MS;
    expect(ends(atBound.requestId)).toBe(ends(early.requestId));
    const after = await boot(false);
    await sb.advance(ends(early.requestId) - 1 - sb.now());
    const answered = await status(after, early.verificationId, 'user-9');
    expect({ status: answered.status, session: answered.body.status }).toEqual({
      status: 200,
      session: 'expired',
    });
    await sb.advance(1);
    const gone = await status(after, atBound.verificationId, 'user-9');
    expect({ status: gone.status, error: gone.body.error_code }).toEqual({ status: 404, error: 'not_found' });
    // The one rebuilt a tick before ends with its record, at the same bound.
    expect((await status(after, early.verificationId, 'user-9')).status).toBe(404);
  });

  it('a handle the API does not know costs at most one GET per minute however often it is polled', async () => {
    const host = await boot(false);
    const unknown = new VerificationHandleCodec(sb.demoAccount.apiSecret).seal(
      '00000000-0000-4000-8000-000000000001',
      'user-8',
    );
    sb.resetRequestCounts();
    // Five minutes of a poll a second.
    for (let i = 0; i < 300; i++) {
      expect((await status(host, unknown, 'user-8')).status).toBe(404);
      await sb.advance(1000);
    }
    expect(sb.requestCount(GET_SESSION)).toBeLessThanOrEqual(5);
  });
});
