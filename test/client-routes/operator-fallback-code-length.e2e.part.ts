/**
 * operator_id's SMS fallback: the API says neither at initiation nor in the session how many digits
 * the fallback code has, so once a code is awaited the start and status answers carry the spec's
 * bounds (`code_length_min` 4, `code_length_max` 8); an SMS session carries its exact length in all
 * three fields. The fallback is played through the sandbox's control API over HTTP.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationHandleCodec } from '../../src/core/verification-handle.codec.js';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { cookieFrom } from '../protection/protection-host.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(PLATFORMS)(
  'client routes: the code length after operator_id falls back to SMS (%s)',
  (platform) => {
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    let host: TestApp;

    beforeAll(async () => {
      sb = suite.sb;
      host = await suite.boot({
        platform,
        module: {
          api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
          clock: () => sb.now(),
          // Coalescing on (a repeated start hands the pending session back), nothing else in the way.
          limits: { enabled: false, coalesceStarts: true },
          reconcile: { enabled: false },
        },
      });
    });

    const start = (phone: string, method: string, headers: Record<string, string> = {}) =>
      call(host.url, 'POST', '/verification/start', { phone_number: phone, method }, headers);
    const status = async (verificationId: string) => {
      // One upstream read per poll interval: each poll here is a fresh one.
      await sb.advance(2500);
      return call(host.url, 'GET', `/verification/status/${verificationId}`);
    };

    it('before the fallback no length is given; after it start and status give the bounds, and the code verifies', async () => {
      const phone = '+79123450601';
      const started = await start(phone, 'operator_id');
      expect(started.status).toBe(201);
      expect(started.body).toMatchObject({ method: 'operator_id', awaiting_code: false });
      expect(started.body).not.toHaveProperty('code_length_min');
      expect(started.body).not.toHaveProperty('code_length_max');
      const id = started.body.verification_id as string;
      const requestId = sb.sessionsFor(phone)[0]!.request_id;

      const pushed = await new SandboxControlClient(sb.url).operator(requestId, 'fallback');
      expect(pushed.result).toBe('code_required');

      const fallen = await status(id);
      expect(fallen.status).toBe(200);
      expect(fallen.body).toMatchObject({
        status: 'sent',
        awaiting_code: true,
        code_length_min: 4,
        code_length_max: 8,
      });
      expect(fallen.body).not.toHaveProperty('code_length');

      // The page reloads and starts again (the same browser, so its cookie): the pending session comes
      // back with the same bounds.
      const again = await start(phone, 'operator_id', cookieFrom(started));
      expect(again.status).toBe(201);
      expect(again.body).toMatchObject({
        resumed: true,
        awaiting_code: true,
        code_length_min: 4,
        code_length_max: 8,
      });

      // A fresh seal of the same session (handles carry a random IV).
      expect(
        new VerificationHandleCodec(sb.demoAccount.apiSecret).open(again.body.verification_id, undefined),
      ).toBe(requestId);

      const code = sb.getSession(requestId)!.code!;
      expect(code.length).toBeGreaterThanOrEqual(fallen.body.code_length_min as number);
      expect(code.length).toBeLessThanOrEqual(fallen.body.code_length_max as number);
      const checked = await call(host.url, 'POST', '/verification/check', { verification_id: id, code });
      expect(checked.body).toMatchObject({ status: 'sent', verified: false });
      await sb.advance(1000); // the operator's result follows the accepted code
      const done = await status(id);
      expect(done.body).toMatchObject({ status: 'verified', awaiting_code: false });
      expect(done.body).not.toHaveProperty('code_length_min');
    });

    it('an SMS session gives its exact length in code_length, code_length_min and code_length_max', async () => {
      const started = await start('+79123450602', 'sms');
      expect(started.body).toMatchObject({ code_length: 6, code_length_min: 6, code_length_max: 6 });
      const polled = await status(started.body.verification_id as string);
      expect(polled.body).toMatchObject({ code_length: 6, code_length_min: 6, code_length_max: 6 });
    });
  },
);
