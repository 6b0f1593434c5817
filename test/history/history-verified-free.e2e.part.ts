/**
 * A verified session of a method charged on proof (a reverse flash call: its starts are filed on the
 * `free` shelf): its start is copied to the `verified` shelf as a paid method's is, so that others' free
 * starts of the number do not push it out of the number's history (support's trail after a takeover).
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { startAccountHost } from '../webhooks/harness.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';

describe.each(PLATFORMS)('verification history: a verified free session (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  const phone = `+7916445${String(process.pid % 100).padStart(2, '0')}${platform === 'express' ? '01' : '02'}`;
  const post = (path: string, body: unknown, user: string) =>
    call(suite.host!.url, 'POST', `/verification/${path}`, body, { 'x-user': user });

  it("a verified reverse flash call's start outlives others' free starts of the number", async () => {
    suite.host = await startAccountHost(platform, suite.sb, {
      module: { history: { maxEntries: 3 } },
    });
    const history = suite.host.app.get(VerificationHistory);
    const started = await post('start', { phone_number: phone, method: 'reverse_flash_call' }, 'erin');
    expect(started.status).toBe(201);
    const [session] = suite.sb.sessionsFor(phone);
    await suite.sb.call(session!.request_id, phone);
    const status = await call(
      suite.host.url,
      'GET',
      `/verification/status/${started.body.verification_id}`,
      undefined,
      { 'x-user': 'erin' },
    );
    expect(status.body.status).toBe('verified');
    // Others' free starts of the number push erin's start off the free shelf (3 slots).
    for (const i of [1, 2, 3, 4]) {
      await suite.sb.advance(1000);
      const other = await post('start', { phone_number: phone, method: 'reverse_flash_call' }, `frank-${i}`);
      expect(other.status).toBe(201);
    }
    const erins = (await history.list({ phoneNumber: phone }))
      .filter((e) => e.owner === 'erin')
      .map((e) => [e.kind, e.status, e.method]);
    expect(erins).toEqual([
      ['start', 'sent', 'reverse_flash_call'],
      ['outcome', 'verified', 'reverse_flash_call'],
    ]);
  });
});
