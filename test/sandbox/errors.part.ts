import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, initiate, type Creds, type Reply } from './sandbox-client.js';

const ROUTES: [string, string][] = [
  ['POST', '/v1/verify'],
  ['GET', '/v1/verify/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f'],
  ['POST', '/v1/verify/check'],
  ['GET', '/v1/balance'],
  ['GET', '/v1/usage'],
  ['GET', '/v1/prices'],
  ['GET', '/dashboard/prices'],
];

function expectProblem(res: Reply, status: number, errorCode?: string): void {
  expect(res.status).toBe(status);
  expect(res.headers.get('content-type')).toBe('application/problem+json');
  expect(res.body).toMatchObject({ status, title: expect.any(String), detail: expect.any(String) });
  if (errorCode) expect(res.body.error_code).toBe(errorCode);
}

/** The spec's error table, and "bad input gets the spec's error and changes nothing". */
describe('sandbox errors', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const verify = (body: unknown, creds?: Creds) => api(sb, 'POST', '/v1/verify', { body, creds });
  const check = (body: unknown, creds?: Creds) => api(sb, 'POST', '/v1/verify/check', { body, creds });

  describe('400 validation_error on POST /v1/verify, nothing created or charged', () => {
    const phone = '+79994440001';
    it.each<[string, unknown]>([
      ['no body', undefined],
      ['a JSON array', [phone, 'sms']],
      ['a JSON string', 'sms'],
      ['a missing phone_number', { method: 'sms' }],
      ['a number as phone_number', { phone_number: 79994440001, method: 'sms' }],
      ['a phone without +', { phone_number: '79994440001', method: 'sms' }],
      ['a phone with letters', { phone_number: '+7999444000a', method: 'sms' }],
      ['a too short phone', { phone_number: '+7999', method: 'sms' }],
      ['a too long phone', { phone_number: '+7999444000112345', method: 'sms' }],
      ['a phone with leading zero', { phone_number: '+07994440001', method: 'sms' }],
      ['a missing method', { phone_number: phone }],
      ['an unknown method', { phone_number: phone, method: 'pigeon' }],
      ['a number as method', { phone_number: phone, method: 3 }],
      ['expiry_seconds as a string', { phone_number: phone, method: 'sms', expiry_seconds: '300' }],
      ['a fractional expiry_seconds', { phone_number: phone, method: 'sms', expiry_seconds: 300.5 }],
      ['expiry_seconds above 600', { phone_number: phone, method: 'sms', expiry_seconds: 601 }],
      ['expiry_seconds below the lower bound', { phone_number: phone, method: 'sms', expiry_seconds: 29 }],
    ])('%s', async (_name, body) => {
      const before = await balanceOf(sb);
      expectProblem(await verify(body), 400, 'validation_error');
      expect(sb.sessionsFor(phone)).toHaveLength(0);
      expect(await balanceOf(sb)).toBe(before);
    });

    it('malformed JSON', async () => {
      const res = await api(sb, 'POST', '/v1/verify', { raw: '{"phone_number": "+79994440001", "method": ' });
      expectProblem(res, 400, 'validation_error');
      expect(sb.sessionsFor(phone)).toHaveLength(0);
    });

    it('a body over 64 KB is 413 payload_too_large', async () => {
      const huge = JSON.stringify({ phone_number: phone, method: 'sms', pad: 'x'.repeat(70 * 1024) });
      const res = await api(sb, 'POST', '/v1/verify', { raw: huge });
      expectProblem(res, 413, 'payload_too_large');
      expect(sb.sessionsFor(phone)).toHaveLength(0);
      expect((await api(sb, 'GET', '/v1/balance')).status).toBe(200); // the server is fine afterwards
    });

    it('accepts formatting around an E.164 number and answers with the normalised number', async () => {
      const s = await initiate(sb, '+7 (999) 444-00-02', 'sms');
      expect(s.phone_number).toBe('+79994440002');
    });
  });

  describe('400 on POST /v1/verify/check, no attempt spent', () => {
    let id: string;
    beforeAll(async () => {
      id = (await initiate(sb, '+79994440010', 'sms')).request_id;
    });

    it.each<[string, unknown]>([
      ['a 3-digit code', { code: '123' }],
      ['a 9-digit code', { code: '123456789' }],
      ['letters in the code', { code: '12ab56' }],
      ['a number as code', { code: 123456 }],
      ['a missing code', {}],
      ['a request_id that is not a GUID', { request_id: 'abc', code: '123456' }],
      ['a number as request_id', { request_id: 42, code: '123456' }],
    ])('%s is validation_error', async (_name, partial) => {
      const res = await check({ request_id: id, ...(partial as object) });
      expectProblem(res, 400, 'validation_error');
      expect(sb.getSession(id)).toMatchObject({ attempts_remaining: 3, status: 'sent' });
    });

    it('malformed JSON is validation_error', async () => {
      expectProblem(
        await api(sb, 'POST', '/v1/verify/check', { raw: '{"request_id":' }),
        400,
        'validation_error',
      );
      expect(sb.getSession(id)!.attempts_remaining).toBe(3);
    });

    it('a wrong code is invalid_code with attempts_remaining', async () => {
      const wrong = sb.getSession(id)!.code === '0000' ? '1111' : '0000';
      const res = await check({ request_id: id, code: wrong });
      expectProblem(res, 400, 'invalid_code');
      expect(res.body.attempts_remaining).toBe(2);
    });
  });

  describe('401 on every route', () => {
    it.each(ROUTES)(
      '%s %s without credentials, with a wrong secret, or with Bearer only',
      async (method, path) => {
        for (const authorization of [
          null,
          `Basic ${Buffer.from(`${sb.demoAccount.apiKey}:wrong`).toString('base64')}`,
          `Basic ${Buffer.from(`nobody:${sb.demoAccount.apiSecret}`).toString('base64')}`,
          'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x',
        ]) {
          const res = await api(sb, method, path, {
            authorization,
            body: method === 'POST' ? {} : undefined,
          });
          expectProblem(res, 401);
          expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
          expect(res.text).not.toContain(sb.demoAccount.apiSecret);
        }
      },
    );
  });

  describe('403 without a body', () => {
    it.each(ROUTES)('%s %s for a disabled account', async (method, path) => {
      const c = await sb.createAccount({ disabled: true });
      const res = await api(sb, method, path, { creds: c, body: method === 'POST' ? {} : undefined });
      expect(res.status).toBe(403);
      expect(res.text).toBe('');
    });

    it('a method not enabled for the account is 403 without a body by default', async () => {
      const c = await sb.createAccount({ enabledMethods: ['sms'] });
      const res = await verify({ phone_number: '+79994440020', method: 'msgr2_bot' }, c);
      expect(res.status).toBe(403);
      expect(res.text).toBe('');
      expect(sb.sessionsFor('+79994440020')).toHaveLength(0);
    });
  });

  describe('404 not_found', () => {
    it('for an unknown request_id on GET and on check', async () => {
      expectProblem(
        await api(sb, 'GET', '/v1/verify/6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f'),
        404,
        'not_found',
      );
      expectProblem(await api(sb, 'GET', '/v1/verify/not-a-guid'), 404, 'not_found');
      expectProblem(
        await check({ request_id: '6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f', code: '123456' }),
        404,
        'not_found',
      );
    });

    it("for another account's session, which is left untouched", async () => {
      const other = await sb.createAccount();
      const s = await initiate(sb, '+79994440030', 'sms', other);
      expectProblem(await api(sb, 'GET', `/v1/verify/${s.request_id}`), 404, 'not_found');
      const code = sb.getSession(s.request_id)!.code!;
      expectProblem(await check({ request_id: s.request_id, code }), 404, 'not_found');
      expect(sb.getSession(s.request_id)).toMatchObject({ status: 'sent', attempts_remaining: 3 });
      expect((await api(sb, 'GET', `/v1/verify/${s.request_id}`, { creds: other })).status).toBe(200);
    });

    it('for a broken percent-encoding in the id or a control path, never a 5xx', async () => {
      expectProblem(await api(sb, 'GET', '/v1/verify/%E0%A4%A'), 404, 'not_found');
      const res = await fetch(`${sb.url}/_sandbox/sessions/%E0%A4%A`);
      expect(res.status).toBe(404);
    });

    it('for unknown routes; 405 for a known path with the wrong method', async () => {
      expectProblem(await api(sb, 'GET', '/v1/nothing'), 404, 'not_found');
      const res = await api(sb, 'DELETE', '/v1/balance');
      expectProblem(res, 405, 'method_not_allowed');
      expect(res.headers.get('allow')).toBe('GET');
    });
  });

  describe('409 not_pending', () => {
    it('for a resolved session, with no attempt spent', async () => {
      const s = await initiate(sb, '+79994440040', 'sms');
      const code = sb.getSession(s.request_id)!.code!;
      await check({ request_id: s.request_id, code });
      const res = await check({ request_id: s.request_id, code });
      expectProblem(res, 409, 'not_pending');
      expect(sb.getSession(s.request_id)!.attempts_remaining).toBe(3);
    });

    it('for an expired session by default', async () => {
      const s = await initiate(sb, '+79994440041', 'sms', undefined, { expiry_seconds: 30 });
      await sb.advance(30_000);
      expectProblem(
        await check({ request_id: s.request_id, code: sb.getSession(s.request_id)!.code! }),
        409,
        'not_pending',
      );
    });
  });

  describe('429 rate_limit_exceeded with Retry-After', () => {
    it('past the account rate, until the window passes', async () => {
      const c = await sb.createAccount({ rateLimitPerSecond: 1 });
      const replies: Reply[] = [];
      for (let i = 0; i < 4; i++) replies.push(await api(sb, 'GET', '/v1/balance', { creds: c }));
      const limited = replies.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThanOrEqual(1);
      expectProblem(limited[0]!, 429, 'rate_limit_exceeded');
      expect(Number(limited[0]!.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      await sb.advance(1_000);
      expect((await api(sb, 'GET', '/v1/balance', { creds: c })).status).toBe(200);
    });

    it('a rate-limited initiation creates and charges nothing', async () => {
      const c = await sb.createAccount({ rateLimitPerSecond: 1, balance: 10 });
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        statuses.push((await verify({ phone_number: '+79994440050', method: 'msgr1' }, c)).status);
      }
      const created = statuses.filter((s) => s === 201).length;
      expect(statuses.filter((s) => s === 429).length).toBe(4 - created);
      expect(sb.sessionsFor('+79994440050')).toHaveLength(created);
      expect(sb.getAccount(c.apiKey)!.balance.amount).toBeCloseTo(10 - 0.9 * created, 2); // via control: GETs count too
    });
  });
});

describe('sandbox errors: the configurable "not shown" answers', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({
      port: 0,
      expiredCheckStatus: 400,
      methodNotEnabled: 400,
      minExpirySeconds: 10,
    });
  });
  afterAll(async () => {
    await sb.close();
  });

  it('expiredCheckStatus 400: an expired session on check is 400 invalid_code with 0 attempts left', async () => {
    const s = await initiate(sb, '+79994440060', 'sms', undefined, { expiry_seconds: 10 });
    await sb.advance(10_000);
    const res = await api(sb, 'POST', '/v1/verify/check', {
      body: { request_id: s.request_id, code: sb.getSession(s.request_id)!.code },
    });
    expectProblem(res, 400, 'invalid_code');
    expect(res.body.attempts_remaining).toBe(0);
    expect(sb.getSession(s.request_id)!.status).toBe('expired');
  });

  it('methodNotEnabled 400: method_not_enabled problem', async () => {
    const c = await sb.createAccount({ enabledMethods: ['sms'] });
    const res = await api(sb, 'POST', '/v1/verify', {
      creds: c,
      body: { phone_number: '+79994440061', method: 'operator_id' },
    });
    expectProblem(res, 400, 'method_not_enabled');
  });

  it('minExpirySeconds moves the lower bound of expiry_seconds', async () => {
    expect((await initiate(sb, '+79994440062', 'sms', undefined, { expiry_seconds: 10 })).status).toBe(
      'sent',
    );
    const res = await api(sb, 'POST', '/v1/verify', {
      body: { phone_number: '+79994440062', method: 'sms', expiry_seconds: 9 },
    });
    expectProblem(res, 400, 'validation_error');
  });
});
