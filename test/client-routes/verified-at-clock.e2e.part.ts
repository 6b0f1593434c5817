/**
 * The time a verification is stamped verified is the module's clock (`clock`, here the sandbox's, a day
 * ahead of the wall), on every path that learns it: the host's check route, a poll of the status route
 * and the signed webhook. A path that stamped the wall clock would answer a `verified_at` a day off, and a
 * guard's `within` would then read a fresh verification as stale (or a stale one as fresh).
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { apiCheck, enterCode, eventsOf, settle, startHost, startSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const DAY = 86_400_000;

describe.each(PLATFORMS)('verified_at on the module clock, by each path (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    // A day ahead of the wall clock: a time taken from Date.now() shows as a day off.
    await sb.advance(DAY);
    host = await suite.boot(() => startHost(platform, sb));
  });

  async function statusOf(verificationId: string, owner: string): Promise<Record<string, unknown>> {
    const res = await call(host.url, 'GET', `/verification/status/${verificationId}`, undefined, {
      'x-user': owner,
    });
    expect(res.status).toBe(200);
    return res.body;
  }

  it('the check route: the status answer and the verified event carry the clock time of the check', async () => {
    const s = await startSession(host, sb, 'sms', 'owner-check');
    await sb.deliver(s.requestId);
    await sb.advance(1_000);
    const checkedAt = sb.now();
    const check = await enterCode(host, sb, s);
    expect(check.body).toMatchObject({ status: 'verified', verified: true });
    expect((await statusOf(s.verificationId, s.owner)).verified_at).toBe(new Date(checkedAt).toISOString());
    await settle(sb);
    const verified = host.events.find(
      (e) => e.requestId === s.requestId && e.event === 'verification.verified',
    );
    expect(verified?.verifiedAt?.getTime()).toBe(checkedAt);
    expect(eventsOf(host, s.requestId).filter((e) => e === 'verification.verified')).toHaveLength(1);
  });

  it('a check answered sent (operator_id, its code accepted) stamps no verified_at: the result is still to come', async () => {
    const s = await startSession(host, sb, 'operator_id', 'owner-accepted');
    await sb.operator(s.requestId, 'fallback');
    await sb.advance(3_000);
    const check = await enterCode(host, sb, s);
    expect(check.body).toMatchObject({ status: 'sent', verified: false });
    expect(await statusOf(s.verificationId, s.owner)).toMatchObject({ status: 'sent', verified_at: null });
  });

  it('a poll of the status route and the webhook: the time the API verified it, on the same clock', async () => {
    const s = await startSession(host, sb, 'sms', 'owner-poll');
    await sb.deliver(s.requestId);
    await sb.advance(2_000);
    const verifiedAt = sb.now();
    expect(await apiCheck(sb, s.requestId, sb.getSession(s.requestId)!.code!)).toBe(200);
    await sb.advance(3_000);
    const answer = await statusOf(s.verificationId, s.owner);
    expect(answer.status).toBe('verified');
    expect(Math.abs(Date.parse(answer.verified_at as string) - verifiedAt)).toBeLessThanOrEqual(1_000);
    await settle(sb);
    const verified = host.events.find(
      (e) => e.requestId === s.requestId && e.event === 'verification.verified',
    );
    expect(Math.abs(verified!.verifiedAt!.getTime() - verifiedAt)).toBeLessThanOrEqual(1_000);
  });
});
