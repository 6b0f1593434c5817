import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control, initiate } from './sandbox-client.js';

/** Route faults: latency, status, reset, garbage, html, empty; counts; clearing. */
describe('sandbox route faults', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });
  beforeEach(() => {
    sb.clearFaults();
  });

  it('latency delays the answer but the request is processed: a delayed POST creates and charges', async () => {
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 300 });
    const before = await balanceOf(sb);
    const started = Date.now();
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), 50);
    await expect(
      fetch(`${sb.url}/v1/verify`, {
        method: 'POST',
        signal: controller.signal,
        headers: {
          authorization: `Basic ${Buffer.from(`${sb.demoAccount.apiKey}:${sb.demoAccount.apiSecret}`).toString('base64')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ phone_number: '+79998880001', method: 'msgr1' }),
      }),
    ).rejects.toThrow();
    clearTimeout(timer);
    expect(Date.now() - started).toBeLessThan(300);
    // The fault's latency is real time (it exists to trip client time-outs): wait for the sandbox to finish.
    const deadline = Date.now() + 5_000;
    while (sb.sessionsFor('+79998880001').length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(sb.sessionsFor('+79998880001')).toHaveLength(1);
    expect(await balanceOf(sb)).toBeCloseTo(before - 0.9, 2);
  });

  it('status answers a problem without processing, for the next N requests of the route', async () => {
    const res = await control(sb, 'POST', '/faults', {
      route: 'POST /v1/verify',
      kind: 'status',
      status: 500,
      count: 2,
    });
    expect(res.status).toBe(201);
    for (let i = 0; i < 2; i++) {
      const r = await api(sb, 'POST', '/v1/verify', {
        body: { phone_number: '+79998880002', method: 'msgr1' },
      });
      expect(r.status).toBe(500);
      expect(r.headers.get('content-type')).toBe('application/problem+json');
      expect(r.body.error_code).toBe('internal_error');
    }
    expect(sb.sessionsFor('+79998880002')).toHaveLength(0);
    expect(
      (await api(sb, 'POST', '/v1/verify', { body: { phone_number: '+79998880002', method: 'msgr1' } }))
        .status,
    ).toBe(201);
  });

  it('status 429 carries Retry-After, status 403 has no body', async () => {
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 429, retry_after_s: 7 });
    const limited = await api(sb, 'GET', '/v1/balance');
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect(limited.body.error_code).toBe('rate_limit_exceeded');
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 403 });
    const forbidden = await api(sb, 'GET', '/v1/balance');
    expect(forbidden.status).toBe(403);
    expect(forbidden.text).toBe('');
  });

  it('reset destroys the connection without processing', async () => {
    sb.addFault({ route: 'POST /v1/verify', kind: 'reset' });
    await expect(
      api(sb, 'POST', '/v1/verify', { body: { phone_number: '+79998880003', method: 'msgr1' } }),
    ).rejects.toThrow();
    expect(sb.sessionsFor('+79998880003')).toHaveLength(0);
  });

  it('garbage, html and empty answer bodies a JSON client cannot use', async () => {
    sb.addFault({ route: 'GET /v1/prices', kind: 'garbage' });
    const garbage = await api(sb, 'GET', '/v1/prices');
    expect(garbage.status).toBe(200);
    expect(() => JSON.parse(garbage.text)).toThrow();

    sb.addFault({ route: 'GET /v1/prices', kind: 'html' });
    const html = await api(sb, 'GET', '/v1/prices');
    expect(html.status).toBe(502);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.text).toMatch(/<html>/);

    sb.addFault({ route: 'GET /v1/prices', kind: 'html', status: 200 });
    expect((await api(sb, 'GET', '/v1/prices')).status).toBe(200);

    sb.addFault({ route: 'GET /v1/prices', kind: 'empty' });
    const empty = await api(sb, 'GET', '/v1/prices');
    expect(empty.status).toBe(200);
    expect(empty.text).toBe('');
  });

  it("route '*' with count 0 hits every API route until cleared, never the control API", async () => {
    await control(sb, 'POST', '/faults', { route: '*', kind: 'status', status: 503, count: 0 });
    for (let i = 0; i < 3; i++) expect((await api(sb, 'GET', '/v1/balance')).status).toBe(503);
    expect((await api(sb, 'GET', '/dashboard/prices')).status).toBe(503);
    expect((await control(sb, 'GET', '/clock')).status).toBe(200);
    expect((await control(sb, 'DELETE', '/faults')).status).toBe(200);
    expect((await api(sb, 'GET', '/v1/balance')).status).toBe(200);
  });

  it('faulted requests are counted', async () => {
    sb.resetRequestCounts();
    sb.addFault({ route: 'GET /v1/usage', kind: 'status', status: 502 });
    await api(sb, 'GET', '/v1/usage');
    await api(sb, 'GET', '/v1/usage');
    expect(sb.requestCount('GET /v1/usage')).toBe(2);
  });

  it.each<[string, unknown]>([
    ['an unknown route', { route: 'GET /v2/x', kind: 'status', status: 500 }],
    ['an unknown kind', { route: '*', kind: 'explode' }],
    ['a status fault without status', { route: '*', kind: 'status' }],
    ['a status below 400', { route: '*', kind: 'status', status: 204 }],
    ['a latency fault without latency_ms', { route: '*', kind: 'latency' }],
    ['a negative count', { route: '*', kind: 'reset', count: -1 }],
    ['not an object', [1, 2]],
  ])('refuses %s with 400 and adds nothing', async (_name, body) => {
    const res = await control(sb, 'POST', '/faults', body);
    expect(res.status).toBe(400);
    expect(res.body.error_code).toBe('validation_error');
    expect((await api(sb, 'GET', '/v1/balance')).status).toBe(200);
  });

  it('a session started before a fault is unaffected by it', async () => {
    const s = await initiate(sb, '+79998880004', 'sms');
    sb.addFault({ route: 'POST /v1/verify/check', kind: 'status', status: 500 });
    const code = sb.getSession(s.request_id)!.code!;
    expect(
      (await api(sb, 'POST', '/v1/verify/check', { body: { request_id: s.request_id, code } })).status,
    ).toBe(500);
    expect(sb.getSession(s.request_id)!.status).toBe('sent');
    expect(
      (await api(sb, 'POST', '/v1/verify/check', { body: { request_id: s.request_id, code } })).body.status,
    ).toBe('verified');
  });
});
