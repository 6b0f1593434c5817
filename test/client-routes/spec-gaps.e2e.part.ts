import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { call, createTestApp, type TestApp } from '../support/verification-app.js';

/** The module survives either answer of the spec's "not shown" items. */
describe('client routes across the spec gaps', () => {
  let sb: VerificationSandbox | undefined;
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    await sb?.close();
  });

  async function boot(sandboxOptions: Parameters<typeof VerificationSandbox.start>[0], linkClock: boolean) {
    sb = await VerificationSandbox.start({ port: 0, ...sandboxOptions });
    const s = sb;
    host = await createTestApp({
      platform: 'express',
      module: {
        api: { baseUrl: s.url, apiKey: s.demoAccount.apiKey, apiSecret: s.demoAccount.apiSecret },
        limits: { enabled: false },
        // Offered as given: what the API answers for a method the account lacks is the point here.
        methods: ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'],
        // Unlinked clocks let the API know of the expiry before the module does.
        ...(linkClock ? { clock: () => s.now() } : {}),
      },
    });
    return { sb: s, host };
  }

  it.each([400, 409] as const)(
    'an expired session on check is not_pending with verification_status expired when the API answers %s',
    async (expiredCheckStatus) => {
      const { sb, host } = await boot({ expiredCheckStatus }, false);
      const start = await call(host.url, 'POST', '/verification/start', {
        phone_number: '+79123457001',
        method: 'sms',
      });
      await sb.advance(301_000);
      const res = await call(host.url, 'POST', '/verification/check', {
        verification_id: start.body.verification_id,
        code: '1234',
      });
      expect(res.status).toBe(409);
      expect(res.body).toMatchObject({
        error_code: 'not_pending',
        status: 409,
        verification_status: 'expired',
      });
    },
  );

  it('a method the account has not enabled: 400 from the API is method_not_available', async () => {
    const { sb, host } = await boot(
      { methodNotEnabled: 400, demoAccount: { enabledMethods: ['sms'] } },
      true,
    );
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123457002',
      method: 'flash_call',
    });
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('method_not_available');
    expect(sb.requestCount('POST /v1/verify')).toBe(1);
  });

  it('a method the account has not enabled: a bare 403 from the API is service_unavailable', async () => {
    const { host } = await boot({ methodNotEnabled: 403, demoAccount: { enabledMethods: ['sms'] } }, true);
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123457003',
      method: 'flash_call',
    });
    expect(res.status).toBe(503);
    expect(res.body.error_code).toBe('service_unavailable');
  });
});
