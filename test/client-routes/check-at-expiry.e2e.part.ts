/**
 * A check at the session's expiry, on the sandbox's frozen clock: one tick before `expires_at` the right
 * code verifies; at it the check is 409 `not_pending` (`verification_status: expired`), answered by the
 * module without asking the API (no attempt spent, no request). The bound is the record's own time.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { startHost, startSession } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const CHECK = 'POST /v1/verify/check';

describe.each(PLATFORMS)('client routes: a check at the expiry (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      startHost(platform, sb, {
        receiveWebhooks: false,
        module: { reconcile: { enabled: false } },
      }),
    );
  });

  it.each(['sms', 'msgr1_otp'] as const)(
    '%s: a tick before expires_at the right code verifies; at it, 409 not_pending expired and no API call',
    async (method) => {
      for (const at of [-1, 0]) {
        const s = await startSession(host, sb, method);
        if (method === 'sms') await sb.deliver(s.requestId);
        const session = sb.getSession(s.requestId)!;
        const expiresAt = Date.parse(session.expires_at);
        await sb.advance(expiresAt + at - sb.now());
        sb.resetRequestCounts();
        const res = await call(
          host.url,
          'POST',
          '/verification/check',
          { verification_id: s.verificationId, code: String(session.code) },
          { 'x-user': s.owner },
        );
        if (at < 0)
          expect({ status: res.status, verified: res.body.verified }).toEqual({
            status: 200,
            verified: true,
          });
        else {
          expect(res.status).toBe(409);
          expect(res.body).toMatchObject({ error_code: 'not_pending', verification_status: 'expired' });
          expect(sb.requestCount(CHECK)).toBe(0);
        }
      }
    },
  );
});
