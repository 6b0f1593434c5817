import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationClientError } from '../../src/core/verification.errors.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

let phoneSeq = 200;
const nextPhone = () => `+791234${String(phoneSeq++).padStart(5, '0')}`;

function expectProblem(
  res: { status: number; headers: Headers; body: Record<string, unknown> },
  status: number,
  code: string,
) {
  expect({ status: res.status, code: res.body.error_code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  // A refusal is about this request: no proxy or browser cache keeps it.
  expect(res.headers.get('cache-control')).toBe('no-store');
  // RFC 9457: `status` is always the integer HTTP status (not_pending's session status is `verification_status`).
  expect(res.body.status).toBe(status);
  expect(typeof res.body.title).toBe('string');
}

describe.each(PLATFORMS)('client routes: every client error code (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;
  let owned: TestApp;
  let user = 'alice';

  beforeAll(async () => {
    sb = suite.sb;
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    host = await suite.boot({
      platform,
      module: {
        api,
        clock: () => sb.now(),
        limits: { enabled: false },
        // No background polling here: these tests count every request that reaches the API.
        reconcile: { enabled: false },
        methods: ['sms', 'reverse_flash_call', 'operator_id'],
      },
    });
    owned = await suite.boot({
      platform,
      module: {
        api,
        clock: () => sb.now(),
        limits: { enabled: false },
        routes: { prefix: 'api/v2/phone' },
        owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user'] ?? user,
      },
    });
  });

  const start = (body: unknown, app = host, prefix = '/verification', headers?: Record<string, string>) =>
    call(app.url, 'POST', `${prefix}/start`, body, headers);

  it('validation_error for missing, wrong-typed, extra and malformed bodies, and nothing reaches the API', async () => {
    sb.resetRequestCounts();
    const bodies: unknown[] = [
      {},
      { phone_number: 79123456789, method: 'sms' },
      // A missing method is `auto` (the policy picks one); a missing number is not.
      { method: 'sms' },
      { phone_number: '+79123456789', method: 'sms', device: 'tablet' },
      { phone_number: '+79123456789', method: 'sms', extra: 1 },
      { phone_number: ['+79123456789'], method: 'sms' },
      [],
      { phone_number: 'not a phone', method: 'sms' },
      { phone_number: '+7912', method: 'sms' },
      { phone_number: '+7'.padEnd(3000, '9'), method: 'sms' },
      { phone_number: '+79123456789', method: 'sms', valueOf: { polluted: true } },
      { phone_number: '+79123456789', method: 'sms', toString: 'x', hasOwnProperty: 1 },
    ];
    for (const body of bodies) {
      const res = await start(body);
      expectProblem(res, 400, 'validation_error');
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it("the host's own call of VerificationService.start with a number that is not a string (a plain-JS host, a body it did not check) is the same 400 validation_error naming phone_number, and nothing reaches the API", async () => {
    sb.resetRequestCounts();
    const service = host.app.get(VerificationService);
    for (const phoneNumber of [79123456789, undefined, ['+79123456789']]) {
      const refused = await service
        .start({ phoneNumber: phoneNumber as unknown as string, method: 'sms', ip: '127.0.0.1' })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(refused).toBeInstanceOf(VerificationClientError);
      expect((refused as VerificationClientError).toProblem()).toMatchObject({
        status: 400,
        error_code: 'validation_error',
        detail: 'phone_number must be a string',
        errors: [{ field: 'phone_number', message: 'phone_number must be a string' }],
      });
    }
    // So are a method that is not a string and a device that is neither of the two.
    for (const [input, field, message] of [
      [{ method: 7 }, 'method', 'method must be a string'],
      [{ method: 'sms', device: 'tablet' }, 'device', 'device must be "mobile" or "desktop"'],
    ] as const) {
      const refused = await service
        .start({ phoneNumber: nextPhone(), ip: '127.0.0.1', ...(input as unknown as { method: string }) })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect((refused as VerificationClientError).toProblem()).toMatchObject({
        status: 400,
        error_code: 'validation_error',
        errors: [{ field, message }],
      });
    }
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it("the host's own call with a method the routes' 40-character bound never let through: its detail echoes 40 characters of it", async () => {
    const method = `m${'x'.repeat(38)}z${'!'.repeat(500)}`;
    const refused = await host.app
      .get(VerificationService)
      .start({ phoneNumber: nextPhone(), method, ip: '127.0.0.1' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect((refused as VerificationClientError).toProblem()).toMatchObject({
      status: 400,
      error_code: 'method_not_available',
      detail: `Method "${method.slice(0, 40)}" is not offered here`,
    });
  });

  it('validation_error names each offending field and why (errors, detail: the first), a field name cut at 64 characters', async () => {
    const long = 'k'.repeat(80);
    const cases: [unknown, { field: string | null; message: string }[]][] = [
      [
        { phone_number: 79123456789, method: 'sms' },
        [{ field: 'phone_number', message: 'phone_number must be a string' }],
      ],
      [
        { phone_number: '+79123456789', method: 'sms', extra: 1 },
        [{ field: 'extra', message: 'property extra should not exist' }],
      ],
      [
        { phone_number: '+79123456789', [long]: 'x' },
        [{ field: long.slice(0, 64), message: `property ${long.slice(0, 64)} should not exist` }],
      ],
      [[], [{ field: null, message: 'The request body must be a JSON object' }]],
      [
        { phone_number: 'x'.repeat(65), method: 'y'.repeat(41), purpose: 'z'.repeat(33), device: 'tablet' },
        [
          { field: 'phone_number', message: 'phone_number must be shorter than or equal to 64 characters' },
          { field: 'method', message: 'method must be shorter than or equal to 40 characters' },
          { field: 'device', message: 'device must be "mobile" or "desktop"' },
          { field: 'purpose', message: 'purpose must be shorter than or equal to 32 characters' },
        ],
      ],
    ];
    for (const [body, errors] of cases) {
      const res = await start(body);
      expectProblem(res, 400, 'validation_error');
      // Nothing to wait for: no Retry-After.
      expect(res.headers.get('retry-after')).toBeNull();
      // In the order of the body's fields as declared; the detail is the first.
      expect({ errors: res.body.errors, detail: res.body.detail }).toEqual({
        errors,
        detail: errors[0]!.message,
      });
    }
  });

  it('a required field left out is told once, as not a string, on each route (never also as too long)', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['/verification/start', { method: 'sms' }, 'phone_number'],
      ['/verification/check', { code: '1234' }, 'verification_id'],
      ['/verification/check', { verification_id: 'abc' }, 'code'],
      ['/verification/switch', {}, 'verification_id'],
      ['/verification/cancel', {}, 'verification_id'],
    ];
    for (const [path, body, field] of cases) {
      const res = await call(host.url, 'POST', path, body);
      expectProblem(res, 400, 'validation_error');
      expect({ path, detail: res.body.detail, errors: res.body.errors }).toEqual({
        path,
        detail: `${field} must be a string`,
        errors: [{ field, message: `${field} must be a string` }],
      });
    }
  });

  it('journey_token is bounded at 2,048 characters on check, switch and cancel: one more is a validation_error naming it', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    const id = s.body.verification_id;
    const bodies = {
      '/verification/check': { verification_id: id, code: '1234' },
      '/verification/switch': { verification_id: id, method: 'flash_call' },
      '/verification/cancel': { verification_id: id },
    };
    const tokenErrors = (res: { body: { errors?: { field: string | null; message: string }[] } }) =>
      (res.body.errors ?? []).filter((e) => e.field === 'journey_token');
    for (const [path, body] of Object.entries(bodies)) {
      const over = await call(host.url, 'POST', path, { ...body, journey_token: 'a'.repeat(2049) });
      expectProblem(over, 400, 'validation_error');
      expect(tokenErrors(over)).toEqual([
        { field: 'journey_token', message: 'journey_token must be shorter than or equal to 2048 characters' },
      ]);
      const at = await call(host.url, 'POST', path, { ...body, journey_token: 'a'.repeat(2048) });
      expect(tokenErrors(at)).toEqual([]);
    }
  });

  it("check, switch and cancel refuse their own fields before any handle is read: verification_id a string of at most 256 characters, a switch's method of at most 40, a check's code", async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    const id = s.body.verification_id as string;
    sb.resetRequestCounts();
    const refused = async (path: string, body: unknown, field: string, message: string) => {
      const res = await call(host.url, 'POST', path, body);
      expectProblem(res, 400, 'validation_error');
      expect(res.body.errors).toEqual([{ field, message }]);
    };
    const longId = 'v'.repeat(257);
    const bodies: Record<string, Record<string, unknown>> = {
      '/verification/check': { code: '1234' },
      '/verification/switch': { method: 'flash_call' },
      '/verification/cancel': {},
    };
    for (const [path, rest] of Object.entries(bodies)) {
      await refused(
        path,
        { ...rest, verification_id: longId },
        'verification_id',
        'verification_id must be shorter than or equal to 256 characters',
      );
      await refused(
        path,
        { ...rest, verification_id: 1234 },
        'verification_id',
        'verification_id must be a string',
      );
    }
    await refused(
      '/verification/switch',
      { verification_id: id, method: 'm'.repeat(41) },
      'method',
      'method must be shorter than or equal to 40 characters',
    );
    // A malformed code is refused as such even with a handle nobody issued (not 404).
    await refused(
      '/verification/check',
      { verification_id: 'not-a-handle', code: '12' },
      'code',
      'code must be 4 to 8 digits',
    );
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
    expect(sb.sessionsFor(s.body.phone_number as string)).toHaveLength(1);
  });

  it("bodies the host's JSON parser refuses before any route runs are still a 400 that reaches nothing", async () => {
    sb.resetRequestCounts();
    for (const body of [
      '{"phone_number": "+79123456789", "method": "sms"',
      'null',
      '"text"',
      '{"__proto__": {"polluted": true}, "phone_number": "+79123456789", "method": "sms"}',
      '{"constructor": {"prototype": {"polluted": true}}, "phone_number": "+79123456789", "method": "sms"}',
    ]) {
      const res = await start(body);
      expect(res.status).toBe(400);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it('phone_not_allowed for other countries (Kazakhstan shares +7) and non-mobile numbers', async () => {
    sb.resetRequestCounts();
    const refused: [string, string, string][] = [];
    for (const phone of [
      '+77012345678', // Kazakhstan
      '+14155550123', // the US
      '+881612345678', // a satellite phone (Iridium): a mobile number of no country at all
      '+74951234567', // a Moscow landline
      '+78001234567', // a Russian toll-free number
    ]) {
      const res = await start({ phone_number: phone, method: 'sms' });
      expectProblem(res, 400, 'phone_not_allowed');
      refused.push([phone, res.body.reason as string, res.body.detail as string]);
    }
    // The reason tells the user what to change: another country's number, or a mobile one.
    const country = 'Numbers of this country cannot be verified here';
    const mobile = 'Only mobile numbers can be verified';
    expect(refused).toEqual([
      ['+77012345678', 'country', country],
      ['+14155550123', 'country', country],
      ['+881612345678', 'country', country],
      ['+74951234567', 'number_type', mobile],
      ['+78001234567', 'number_type', mobile],
    ]);
    // A number that does not parse is a validation_error naming the field.
    const unparsed = await start({ phone_number: '+7912', method: 'sms' });
    expectProblem(unparsed, 400, 'validation_error');
    expect((unparsed.body.errors as { field: string }[]).map((e) => e.field)).toEqual(['phone_number']);
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it('method_not_available for methods the deployment does not offer', async () => {
    for (const method of ['msgr2_bot', 'voice', 'carrier_pigeon']) {
      const res = await start({ phone_number: nextPhone(), method });
      expectProblem(res, 400, 'method_not_available');
    }
  });

  it('invalid_code keeps attempts_remaining; exhausting them fails the session (not_pending failed)', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    const id = s.body.verification_id;
    const first = await call(host.url, 'POST', '/verification/check', { verification_id: id, code: '0000' });
    expectProblem(first, 400, 'invalid_code');
    expect(first.body.attempts_remaining).toBe(2);
    await call(host.url, 'POST', '/verification/check', { verification_id: id, code: '0000' });
    const last = await call(host.url, 'POST', '/verification/check', { verification_id: id, code: '0000' });
    expect(last.body.attempts_remaining).toBe(0);
    const after = await call(host.url, 'POST', '/verification/check', { verification_id: id, code: '0000' });
    expectProblem(after, 409, 'not_pending');
    expect(after.body.verification_status).toBe('failed');
    // The detail a page may show says what became of it.
    expect(after.body.detail).toBe('The verification is failed');
  });

  it('codes of 3 or 9 digits are validation_error and spend no attempt', async () => {
    const phone = nextPhone();
    const s = await start({ phone_number: phone, method: 'sms' });
    for (const code of ['123', '123456789', 'abcd', 1234]) {
      const res = await call(host.url, 'POST', '/verification/check', {
        verification_id: s.body.verification_id,
        code,
      });
      expectProblem(res, 400, 'validation_error');
    }
    expect(sb.sessionsFor(phone)[0].attempts_remaining).toBe(3);
  });

  it('not_pending with status expired after the TTL, without spending an attempt', async () => {
    const phone = nextPhone();
    const s = await start({ phone_number: phone, method: 'sms' });
    await sb.advance(301_000);
    const res = await call(host.url, 'POST', '/verification/check', {
      verification_id: s.body.verification_id,
      code: '1234',
    });
    expectProblem(res, 409, 'not_pending');
    expect(res.body.verification_status).toBe('expired');
  });

  it('not_found for unknown, forged, altered and truncated handles, without an upstream call', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    const id = s.body.verification_id as string;
    const flipped = id.slice(0, 10) + (id[10] === 'A' ? 'B' : 'A') + id.slice(11);
    sb.resetRequestCounts();
    for (const handle of [
      'nope',
      flipped,
      id.slice(0, -4),
      'A'.repeat(80),
      sb.sessionsFor(String(s.body.phone_number))[0].request_id,
    ]) {
      const status = await call(
        host.url,
        'GET',
        `/verification/status/${encodeURIComponent(String(handle))}`,
      );
      expectProblem(status, 404, 'not_found');
      const check = await call(host.url, 'POST', '/verification/check', {
        verification_id: handle,
        code: '1234',
      });
      expectProblem(check, 404, 'not_found');
    }
    expect(sb.requestCount()).toBe(0);
  });

  it('a handle bound to one owner is not_found for another, under a custom prefix', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' }, owned, '/api/v2/phone', {
      'x-user': 'alice',
    });
    expect(s.status).toBe(201);
    const mine = await call(owned.url, 'GET', `/api/v2/phone/status/${s.body.verification_id}`, undefined, {
      'x-user': 'alice',
    });
    expect(mine.status).toBe(200);
    const theirs = await call(owned.url, 'GET', `/api/v2/phone/status/${s.body.verification_id}`, undefined, {
      'x-user': 'bob',
    });
    expectProblem(theirs, 404, 'not_found');
    const check = await call(
      owned.url,
      'POST',
      '/api/v2/phone/check',
      { verification_id: s.body.verification_id, code: '1234' },
      { 'x-user': 'bob' },
    );
    expectProblem(check, 404, 'not_found');
    // The default prefix is not served by this app.
    expect((await call(owned.url, 'GET', '/verification/methods')).status).toBe(404);
    user = 'alice';
  });

  it('check on a reverse flash call is method_not_available: its detail says the call confirms it', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'reverse_flash_call' });
    const res = await call(host.url, 'POST', '/verification/check', {
      verification_id: s.body.verification_id,
      code: '1234',
    });
    expectProblem(res, 400, 'method_not_available');
    expect(res.body.detail).toBe('This verification is confirmed by the call; there is no code to check');
    // Like a method not offered, it lists what the frontend may use instead: where a switch may go now.
    const status = await call(host.url, 'GET', `/verification/status/${s.body.verification_id}`);
    expect([...(status.body.switch_methods as string[])].sort()).toEqual(['operator_id', 'sms']);
    expect(res.body.available_methods).toEqual(status.body.switch_methods);
  });

  it('check on a reverse flash call the user already completed lists nothing to switch to', async () => {
    const phone = nextPhone();
    const s = await start({ phone_number: phone, method: 'reverse_flash_call' });
    await sb.call(sb.sessionsFor(phone)[0]!.request_id, phone);
    await sb.webhooksIdle();
    const verified = await call(host.url, 'GET', `/verification/status/${s.body.verification_id}`);
    expect(verified.body.status).toBe('verified');
    const res = await call(host.url, 'POST', '/verification/check', {
      verification_id: s.body.verification_id,
      code: '1234',
    });
    expectProblem(res, 400, 'method_not_available');
    expect(res.body.available_methods).toEqual([]);
  });

  it("a check the API fails is answered as a start's failure: 429 keeps the API's Retry-After, a 5xx is 503 with 30 s", async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    const cases = [
      {
        fault: { kind: 'status', status: 429, retry_after_s: 7 },
        status: 429,
        code: 'rate_limit_exceeded',
        wait: '7',
      },
      { fault: { kind: 'status', status: 500 }, status: 503, code: 'service_unavailable', wait: '30' },
    ] as const;
    for (const { fault, status, code, wait } of cases) {
      sb.clearFaults();
      sb.addFault({ route: 'POST /v1/verify/check', count: 1, ...fault });
      const res = await call(host.url, 'POST', '/verification/check', {
        verification_id: s.body.verification_id,
        code: '1234',
      });
      expectProblem(res, status, code);
      expect(res.headers.get('retry-after')).toBe(wait);
    }
    sb.clearFaults();
  });

  it('a check the API refuses with 409 while the session cannot be read from it is answered from the record: not_pending, sent', async () => {
    const s = await start({ phone_number: nextPhone(), method: 'sms' });
    sb.clearFaults();
    sb.addFault({ route: 'POST /v1/verify/check', count: 1, kind: 'status', status: 409 });
    sb.addFault({ route: 'GET /v1/verify/:id', count: 10, kind: 'status', status: 500 });
    const res = await call(host.url, 'POST', '/verification/check', {
      verification_id: s.body.verification_id,
      code: '1234',
    });
    sb.clearFaults();
    expectProblem(res, 409, 'not_pending');
    expect(res.body.verification_status).toBe('sent');
  });

  it('upstream 401, 402, 403, 5xx, time-outs and garbage become 503 service_unavailable; 429 stays 429 with Retry-After', async () => {
    const cases = [
      { kind: 'status', status: 500 },
      { kind: 'status', status: 403 },
      { kind: 'status', status: 401 },
      { kind: 'status', status: 402 },
      { kind: 'reset' },
      { kind: 'garbage' },
      { kind: 'html' },
    ] as const;
    for (const fault of cases) {
      sb.clearFaults();
      sb.addFault({ route: 'POST /v1/verify', count: 1, ...fault });
      const res = await start({ phone_number: nextPhone(), method: 'sms' });
      expectProblem(res, 503, 'service_unavailable');
      expect(JSON.stringify(res.body)).not.toMatch(/402|403|401|500|html|garbage/i);
    }
    sb.addFault({ route: 'POST /v1/verify', count: 1, kind: 'status', status: 429, retry_after_s: 7 });
    const limited = await start({ phone_number: nextPhone(), method: 'sms' });
    expectProblem(limited, 429, 'rate_limit_exceeded');
    expect(limited.headers.get('retry-after')).toBe('7');
    sb.clearFaults();
  });

  it('an insufficient balance is 503 for the frontend and balance_insufficient for the host', async () => {
    const before = host.opsEvents.length;
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    const res = await start({ phone_number: nextPhone(), method: 'sms' });
    expectProblem(res, 503, 'service_unavailable');
    expect(host.opsEvents.slice(before).map((e) => e.name)).toEqual(['verification.balance_insufficient']);
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 1000 });
  });

  it("leaves the host's own routes and error format alone", async () => {
    const ok = await call(host.url, 'GET', '/host/ping');
    expect(ok.body).toEqual({ pong: true });
    const missing = await call(host.url, 'GET', '/host/missing');
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).not.toMatch(/problem/);
  });
});
