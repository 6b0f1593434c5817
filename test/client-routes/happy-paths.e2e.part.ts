import { beforeAll, describe, expect, it } from '@jest/globals';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(PLATFORMS)('client routes: every method end to end (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        limits: { enabled: false },
      },
    });
  });

  it('sms: start, deliver, check the code, verified', async () => {
    const start = await call(host.url, 'POST', '/verification/start', {
      phone_number: '8 (912) 345-67-01',
      method: 'sms',
    });
    expect(start.status).toBe(201);
    expect(start.body).toMatchObject({
      method: 'sms',
      status: 'sent',
      phone_number: '+79123456701',
      awaiting_code: true,
    });
    expect(typeof start.body.verification_id).toBe('string');
    expect(start.body).not.toHaveProperty('cost');
    expect(start.body).not.toHaveProperty('request_id');
    expect(start.body.poll_interval_ms).toBe(2500);
    const internal = sb.sessionsFor('+79123456701')[0];
    expect(JSON.stringify(start.body)).not.toContain(internal.request_id);
    await new SandboxControlClient(sb.url).deliver(internal.request_id);
    const code = sb.getSession(internal.request_id)!.code as string;
    const check = await call(host.url, 'POST', '/verification/check', {
      verification_id: start.body.verification_id,
      code,
    });
    expect(check.status).toBe(200);
    expect(check.body).toEqual({
      verification_id: start.body.verification_id,
      status: 'verified',
      verified: true,
    });
    const status = await call(host.url, 'GET', `/verification/status/${start.body.verification_id}`);
    expect(status.status).toBe(200);
    expect(status.headers.get('cache-control')).toBe('no-store');
    expect(status.body).toMatchObject({
      status: 'verified',
      phone_number: '+7******6701',
      awaiting_code: false,
    });
    expect(host.events.filter((e) => e.requestId === internal.request_id).map((e) => e.event)).toEqual([
      'verification.verified',
    ]);
  });

  it('reverse flash call: number to call, call from the number, status verified', async () => {
    const start = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123456702',
      method: 'reverse_flash_call',
    });
    expect(start.status).toBe(201);
    expect(start.body.number_to_call).toMatch(/^\+7\d{10}$/);
    expect(start.body.poll_interval_ms).toBe(1500);
    expect(start.body.awaiting_code).toBe(false);
    const internal = sb.sessionsFor('+79123456702')[0];
    await new SandboxControlClient(sb.url).call(internal.request_id, '+79123456702');
    const status = await call(host.url, 'GET', `/verification/status/${start.body.verification_id}`);
    expect(status.body).toMatchObject({ status: 'verified', number_to_call: start.body.number_to_call });
    expect(typeof status.body.verified_at).toBe('string');
  });

  it('methods lists what the deployment offers', async () => {
    const res = await call(host.url, 'GET', '/verification/methods');
    expect(res.status).toBe(200);
    expect((res.body.methods as { method: string }[]).map((m) => m.method)).toEqual([
      'reverse_flash_call',
      'flash_call',
      'msgr1_otp',
      'msgr2_bot',
      'sms',
      'operator_id',
    ]);
    // The phone option's default country, for a frontend that reads numbers typed without `+`.
    expect(res.body.default_country).toBe('RU');
  });
});
