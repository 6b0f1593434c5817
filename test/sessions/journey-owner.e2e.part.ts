/**
 * A switched journey belongs to the owner who started it, although its journey record keeps no owner
 * (d7fee2c8): before and after a restart that rebuilds it from its `journey_token` (MemoryStore), another
 * owner and a caller without one, holding the handle and the token, get 404 from status, the status
 * stream, check, switch and cancel, and null from getVerifiedPhone; nothing is rebuilt or paid for them.
 * The switched step's events carry the starter's owner and a handle that opens for it; erasing that
 * owner removes both steps' records and the journey record.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { openSse } from '../support/sse-client.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { nextPhone, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const OWNER = 'alice';
/** Another owner, and a caller without one. */
const STRANGERS = ['mallory', null] as const;

describe.each(ONE_PLATFORM)('a switched journey is its starter’s only (%s, MemoryStore)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];

  beforeAll(() => {
    sb = suite.sb;
  });
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
  });

  const boot = async (): Promise<TestApp> => {
    const host = await startHost(platform, sb, { receiveWebhooks: false });
    hosts.push(host);
    return host;
  };
  const who = (owner: string | null): Record<string, string> => (owner === null ? {} : { 'x-user': owner });
  const query = (token: string) => `?journey_token=${encodeURIComponent(token)}`;
  const post = (host: TestApp, route: string, owner: string | null, body: Record<string, unknown>) =>
    call(host.url, 'POST', `/verification/${route}`, body, who(owner));

  /** Every client route and getVerifiedPhone, for `owner`, with the handle and the token: all refused. */
  async function expectRefused(host: TestApp, id: string, token: string, code: string, owner: string | null) {
    const headers = who(owner);
    const status = await call(
      host.url,
      'GET',
      `/verification/status/${id}${query(token)}`,
      undefined,
      headers,
    );
    expect({ who: owner, route: 'status', status: status.status }).toEqual({
      who: owner,
      route: 'status',
      status: 404,
    });
    const stream = await openSse(`${host.url}/verification/status/${id}/events${query(token)}`, headers);
    stream.stream?.close();
    expect({ who: owner, route: 'stream', status: stream.status }).toEqual({
      who: owner,
      route: 'stream',
      status: 404,
    });
    const body = { verification_id: id, journey_token: token };
    for (const [route, extra] of [
      ['check', { code }],
      ['switch', { method: 'msgr1_otp' }],
      ['cancel', {}],
    ] as const) {
      const answer = await post(host, route, owner, { ...body, ...extra });
      expect({ who: owner, route, status: answer.status, code: answer.body.error_code }).toEqual({
        who: owner,
        route,
        status: 404,
        code: 'not_found',
      });
    }
    const service = host.app.get(VerificationService);
    expect(await service.getVerifiedPhone(id, owner ?? undefined, token)).toBeNull();
  }

  it('another owner or none: refused before and after a restart; events and erasure follow the starter', async () => {
    const before = await boot();
    const phone = nextPhone();
    const started = await post(before, 'start', OWNER, { phone_number: phone, method: 'sms' });
    const id = started.body.verification_id as string;
    await sb.advance(61_000);
    const moved = await post(before, 'switch', OWNER, { verification_id: id, method: 'flash_call' });
    expect(moved.status).toBe(201);
    const token = moved.body.journey_token as string;
    const [callId, smsId] = sb.sessionsFor(phone).map((s) => s.request_id);
    await sb.deliver(callId!);
    const code = sb.getSession(callId!)!.code!;

    // Before the restart: the journey record (no owner) and the flash call's record are in the store.
    sb.resetRequestCounts();
    for (const stranger of STRANGERS) await expectRefused(before, id, token, code, stranger);
    expect(sb.requestCount()).toBe(0);
    await before.close();
    hosts.splice(hosts.indexOf(before), 1);

    // After it (an empty MemoryStore): a stranger's handle and token put nothing back and ask the API nothing.
    const after = await boot();
    const records = after.app.get(SessionRecordRepository, { strict: false });
    sb.resetRequestCounts();
    for (const stranger of STRANGERS) await expectRefused(after, id, token, code, stranger);
    expect(sb.requestCount()).toBe(0);
    expect(await records.getJourney(smsId!)).toBeNull();

    // The starter puts the journey back; its rebuilt steps are hers.
    const seen = await call(
      after.url,
      'GET',
      `/verification/status/${id}${query(token)}`,
      undefined,
      who(OWNER),
    );
    expect(seen.body).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
    expect(await records.getJourney(smsId!)).not.toBeNull();
    expect((await records.get(callId!))?.owner).toBe(OWNER);
    expect((await records.get(smsId!))?.owner).toBe(OWNER);
    // Put back, it is still refused to the strangers (the handle alone, and with the token).
    for (const stranger of STRANGERS) await expectRefused(after, id, token, code, stranger);
    expect(sb.sessionsFor(phone)).toHaveLength(2);

    // The starter verifies by the switched step: its event names her, with a handle that opens for her only.
    const checked = await post(after, 'check', OWNER, { verification_id: id, code, journey_token: token });
    expect(checked.body).toMatchObject({ verification_id: id, status: 'verified', verified: true });
    const verified = after.events.filter((e) => e.event === 'verification.verified');
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({ requestId: callId, owner: OWNER, verificationId: id });
    const codec = after.app.get(VerificationHandleCodec, { strict: false });
    expect(codec.open(verified[0]!.verificationId, OWNER)).toBe(smsId);
    expect(codec.open(verified[0]!.verificationId, 'mallory')).toBeNull();
    expect(await after.app.get(VerificationService).getVerifiedPhone(id, OWNER)).toBe(phone);
    for (const stranger of STRANGERS)
      expect(await after.app.get(VerificationService).getVerifiedPhone(id, stranger ?? undefined)).toBeNull();

    // Erasing the owner removes both steps and the journey record.
    const report = await after.app.get(VerificationErasure).forget({ owner: OWNER });
    expect(report.sessions).toBe(2);
    expect(await records.get(callId!)).toBeNull();
    expect(await records.get(smsId!)).toBeNull();
    expect(await records.getJourney(smsId!)).toBeNull();
    expect(await after.app.get(VerificationService).getVerifiedPhone(id, OWNER, token)).toBeNull();
    const gone = await call(
      after.url,
      'GET',
      `/verification/status/${id}${query(token)}`,
      undefined,
      who(OWNER),
    );
    expect(gone.status).toBe(404);
  });

  it('on one instance, without a restart: the switched step’s events name the starter; erasing her removes the journey', async () => {
    const host = await boot();
    const records = host.app.get(SessionRecordRepository, { strict: false });
    const phone = nextPhone();
    const started = await post(host, 'start', OWNER, { phone_number: phone, method: 'sms' });
    const id = started.body.verification_id as string;
    await sb.advance(61_000);
    const moved = await post(host, 'switch', OWNER, { verification_id: id, method: 'flash_call' });
    const token = moved.body.journey_token as string;
    const [callId, smsId] = sb.sessionsFor(phone).map((s) => s.request_id);
    expect((await records.get(callId!))?.owner).toBe(OWNER);
    expect(await records.getJourney(smsId!)).not.toBeNull();
    expect(await records.getJourney(smsId!)).not.toHaveProperty('owner');
    await sb.deliver(callId!);
    const code = sb.getSession(callId!)!.code!;
    expect((await post(host, 'check', OWNER, { verification_id: id, code })).body.verified).toBe(true);
    expect(host.events.filter((e) => e.requestId === callId).map((e) => [e.event, e.owner])).toEqual(
      expect.arrayContaining([['verification.verified', OWNER]]),
    );
    for (const stranger of STRANGERS) await expectRefused(host, id, token, code, stranger);
    await host.app.get(VerificationErasure).forget({ owner: OWNER });
    expect(await records.get(callId!)).toBeNull();
    expect(await records.get(smsId!)).toBeNull();
    expect(await records.getJourney(smsId!)).toBeNull();
  });
});
