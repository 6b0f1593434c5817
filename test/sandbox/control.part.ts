import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control, initiate } from './sandbox-client.js';

/** The /_sandbox control API: accounts, sessions, requests; and refusal when control is off. */
describe('sandbox control API', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('creates an account from snake_case fields (201) that then works over Basic auth', async () => {
    const res = await control(sb, 'POST', '/accounts', {
      api_key: 'acme',
      api_secret: 'acme-secret',
      balance: 12.34,
      enabled_methods: ['sms', 'msgr1'],
      prices: { sms: 4.5 },
      webhook_url: 'http://127.0.0.1:9/hooks',
      code_attempts: 5,
      auto_deliver: true,
      rate_limit_per_second: 50,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      api_key: 'acme',
      api_secret: 'acme-secret',
      webhook_secret: expect.stringMatching(/^whsec_/),
      balance: { amount: 12.34, currency: 'RUB' },
      enabled_methods: ['msgr1_otp', 'sms'],
      webhook_url: 'http://127.0.0.1:9/hooks',
      code_attempts: 5,
      auto_deliver: true,
      rate_limit_per_second: 50,
    });
    expect(res.body.prices.sms).toEqual({ amount: 4.5, currency: 'RUB' });
    const creds = { apiKey: 'acme', apiSecret: 'acme-secret' };
    expect(await balanceOf(sb, creds)).toBe(12.34);
    const s = await initiate(sb, '+79990001001', 'sms', creds);
    expect(s.cost).toEqual({ amount: 4.5, currency: 'RUB' });
  });

  it('refuses a duplicate api_key (409) and bad fields (400) without creating anything', async () => {
    expect((await control(sb, 'POST', '/accounts', { api_key: 'acme' })).status).toBe(409);
    for (const body of [
      { api_key: 'x1', balance: 1.234 },
      { api_key: 'x2', enabled_methods: ['sms', 'voice'] },
      { api_key: 'x3', webhook_url: 'ftp://nope' },
      { api_key: 'x4', webhook_secret: 'plain' },
      { api_key: 'x5', code_attempts: 0 },
      { api_key: 'x6', rate_limit_per_second: 1.5 },
      { api_key: 'x7', balanse: 10 },
      { api_key: 'bad key!' },
    ]) {
      const res = await control(sb, 'POST', '/accounts', body);
      expect(res.status).toBe(400);
      expect(res.body.error_code).toBe('validation_error');
      expect((await control(sb, 'GET', `/accounts/${encodeURIComponent(body.api_key)}`)).status).toBe(404);
    }
  });

  it('patches and reads an account; a bad patch changes nothing', async () => {
    const res = await control(sb, 'PATCH', '/accounts/acme', { balance: 50, webhook_url: null });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ balance: { amount: 50 }, webhook_url: null });
    const bad = await control(sb, 'PATCH', '/accounts/acme', { balance: 70, code_attempts: 'many' });
    expect(bad.status).toBe(400);
    expect((await control(sb, 'GET', '/accounts/acme')).body.balance.amount).toBe(50);
    expect((await control(sb, 'PATCH', '/accounts/nobody', { balance: 1 })).status).toBe(404);
  });

  it('rotating a secret through a patch makes the old one 401', async () => {
    const c = await sb.createAccount({ apiSecret: 'old-secret' });
    await sb.updateAccount(c.apiKey, { apiSecret: 'new-secret' });
    expect(
      (await api(sb, 'GET', '/v1/balance', { creds: { apiKey: c.apiKey, apiSecret: 'old-secret' } })).status,
    ).toBe(401);
    expect(
      (await api(sb, 'GET', '/v1/balance', { creds: { apiKey: c.apiKey, apiSecret: 'new-secret' } })).status,
    ).toBe(200);
  });

  it("lists a phone's sessions newest first across accounts, with the whole internal state", async () => {
    const other = await sb.createAccount();
    const a = await initiate(sb, '+79990001002', 'sms');
    const b = await initiate(sb, '+79990001002', 'reverse_flash_call', other);
    const res = await control(sb, 'GET', `/sessions?phone_number=${encodeURIComponent('+79990001002')}`);
    expect(res.status).toBe(200);
    expect(res.body.sessions.map((s: { request_id: string }) => s.request_id)).toEqual([
      b.request_id,
      a.request_id,
    ]);
    expect(Object.keys(res.body.sessions[0]).sort()).toEqual(
      [
        'request_id',
        'api_key',
        'phone_number',
        'method',
        'status',
        'code',
        'code_length',
        'incoming_number',
        'number_to_call',
        'deep_link',
        'attempts_remaining',
        'awaiting_code',
        'charged',
        'cost',
        'created_at',
        'expires_at',
        'verified_at',
        'operator_state',
        'shared_phone_number',
      ].sort(),
    );
    expect(sb.sessionsFor('+79990001002')).toEqual(res.body.sessions);
    const one = await control(sb, 'GET', `/sessions/${a.request_id}`);
    expect(one.body).toEqual(sb.getSession(a.request_id));
    expect(one.body).toMatchObject({
      api_key: 'demo_key',
      method: 'sms',
      code: expect.stringMatching(/^\d{6}$/),
    });
  });

  it('answers 404 for unknown sessions and routes, 400 for bad control bodies', async () => {
    expect((await control(sb, 'GET', '/sessions/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f')).status).toBe(404);
    expect((await control(sb, 'POST', '/sessions/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f/deliver')).status).toBe(
      404,
    );
    expect((await control(sb, 'GET', '/nothing')).status).toBe(404);
    expect((await control(sb, 'GET', '/sessions')).status).toBe(400);
    const s = await initiate(sb, '+79990001003', 'reverse_flash_call');
    expect((await control(sb, 'POST', `/sessions/${s.request_id}/call`, { from: 'me' })).status).toBe(400);
    expect((await control(sb, 'POST', `/sessions/${s.request_id}/call`)).status).toBe(400);
    expect((await control(sb, 'POST', '/clock', { advance_ms: 'soon' })).status).toBe(400);
    expect(sb.getSession(s.request_id)!.status).toBe('sent');
  });

  it('reads and resets request counts', async () => {
    await control(sb, 'DELETE', '/requests');
    await api(sb, 'GET', '/v1/verify/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f');
    await api(sb, 'GET', '/dashboard/prices');
    expect((await control(sb, 'GET', '/requests')).body.counts).toEqual({
      'GET /v1/verify/:id': 1,
      'GET /dashboard/prices': 1,
    });
    expect(sb.requestCount()).toBe(2);
  });
});

describe('sandbox control API switched off', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, control: false });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('refuses every control route with 404 and changes nothing', async () => {
    const before = sb.now();
    for (const [method, path, body] of [
      ['GET', '/webhooks', undefined],
      ['POST', '/clock', { advance_ms: 60_000 }],
      ['POST', '/accounts', { api_key: 'sneaky' }],
    ] as const) {
      const res = await control(sb, method, path, body);
      expect(res.status).toBe(404);
      expect(res.body.error_code).toBe('not_found');
    }
    expect(sb.now() - before).toBeLessThan(60_000);
    expect(sb.getAccount('sneaky')).toBeUndefined();
    expect((await api(sb, 'GET', '/v1/balance')).status).toBe(200);
  });
});
