import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control, initiate } from './sandbox-client.js';

describe('sandbox core: start, auth, sms flow, clock, control, counts, faults', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('starts on a free port with a base URL without /v1 and random demo secrets', async () => {
    expect(sb.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(sb.demoAccount.apiKey).toBe('demo_key');
    expect(sb.demoAccount.apiSecret.length).toBeGreaterThan(20);
    expect(sb.demoAccount.webhookSecret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const other = await VerificationSandbox.start({ port: 0 });
    try {
      expect(other.demoAccount.apiSecret).not.toBe(sb.demoAccount.apiSecret);
    } finally {
      await other.close();
    }
  });

  it('runs an SMS verification: 201 sent with cost, GET, deliver, check verified, charged on delivery', async () => {
    const before = await balanceOf(sb);
    const started = await initiate(sb, '+79990000001', 'sms');
    expect(started).toMatchObject({
      method: 'sms',
      phone_number: '+79990000001',
      status: 'sent',
      cost: { amount: 3, currency: 'RUB' },
      code_length: 6,
    });
    expect(started.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(started.expires_at) - sb.now()).toBeGreaterThan(299_000);
    expect(await balanceOf(sb)).toBe(before);

    const polled = await api(sb, 'GET', `/v1/verify/${started.request_id}`);
    expect(polled.status).toBe(200);
    expect(polled.body).toMatchObject({ request_id: started.request_id, status: 'sent', verified_at: null });

    const delivered = await control(sb, 'POST', `/sessions/${started.request_id}/deliver`);
    expect(delivered.status).toBe(200);
    expect(delivered.body).toMatchObject({ status: 'delivered', charged: true, result: 'delivered' });
    expect(await balanceOf(sb)).toBe(before - 3);

    const code = sb.getSession(started.request_id)!.code!;
    const checked = await api(sb, 'POST', '/v1/verify/check', {
      body: { request_id: started.request_id, code },
    });
    expect(checked.status).toBe(200);
    expect(checked.body).toEqual({
      request_id: started.request_id,
      status: 'verified',
      phone_number: '+79990000001',
    });
    const after = await api(sb, 'GET', `/v1/verify/${started.request_id}`);
    expect(after.body.status).toBe('verified');
    expect(after.body.verified_at).not.toBeNull();
    expect(await balanceOf(sb)).toBe(before - 3);
  });

  it('expires a session when the clock passes expires_at, without sleeping', async () => {
    const started = await initiate(sb, '+79990000002', 'sms', undefined, { expiry_seconds: 60 });
    await sb.advance(59_000);
    expect(sb.getSession(started.request_id)!.status).toBe('sent');
    await sb.advance(1_000);
    expect(sb.getSession(started.request_id)!.status).toBe('expired');
    const polled = await api(sb, 'GET', `/v1/verify/${started.request_id}`);
    expect(polled.body.status).toBe('expired');
  });

  it('answers 401 problems to missing, wrong and Bearer credentials', async () => {
    for (const authorization of [
      null,
      'Basic ' + Buffer.from('demo_key:nope').toString('base64'),
      'Bearer x.y.z',
    ]) {
      const res = await api(sb, 'GET', '/v1/balance', { authorization });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.status).toBe(401);
      expect(res.text).not.toContain(sb.demoAccount.apiSecret);
    }
  });

  it('moves the clock through the control API too', async () => {
    const before = sb.now();
    const res = await control(sb, 'POST', '/clock', { advance_ms: 5_000 });
    expect(res.status).toBe(200);
    expect(res.body.now).toBeGreaterThanOrEqual(before + 5_000);
    expect(sb.now()).toBeGreaterThanOrEqual(before + 5_000);
  });

  it('counts API requests by route key and resets the counts', async () => {
    sb.resetRequestCounts();
    await api(sb, 'GET', '/v1/balance');
    await api(sb, 'GET', '/v1/balance');
    await api(sb, 'GET', '/v1/prices');
    await control(sb, 'GET', '/requests');
    expect(sb.requestCount('GET /v1/balance')).toBe(2);
    expect(sb.requestCount('GET /v1/prices')).toBe(1);
    expect(sb.requestCount()).toBe(3);
    expect((await control(sb, 'GET', '/requests')).body.counts).toEqual({
      'GET /v1/balance': 2,
      'GET /v1/prices': 1,
    });
    sb.resetRequestCounts();
    expect(sb.requestCount()).toBe(0);
  });

  it('answers an injected 503 once, then normally', async () => {
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 503 });
    const faulted = await api(sb, 'GET', '/v1/balance');
    expect(faulted.status).toBe(503);
    expect(faulted.body.error_code).toBe('service_unavailable');
    expect((await api(sb, 'GET', '/v1/balance')).status).toBe(200);
  });
});

describe('sandbox core: frozen clock', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('moves only by advance, so millisecond boundaries are exact', async () => {
    const t0 = sb.now();
    const s = await initiate(sb, '+79990000101', 'sms', undefined, { expiry_seconds: 30 });
    expect(sb.now()).toBe(t0);
    await sb.advance(29_999);
    expect((await api(sb, 'GET', `/v1/verify/${s.request_id}`)).body.status).toBe('sent');
    await sb.advance(1);
    expect((await api(sb, 'GET', `/v1/verify/${s.request_id}`)).body.status).toBe('expired');
    expect(sb.now()).toBe(t0 + 30_000);
  });

  it('refuses to move backwards', async () => {
    await expect(sb.advance(-1)).rejects.toThrow(RangeError);
    expect((await control(sb, 'POST', '/clock', { advance_ms: -5 })).status).toBe(400);
  });
});
