import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, createTestApp, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';

let phoneSeq = 100;
const nextPhone = () => `+791234${String(phoneSeq++).padStart(5, '0')}`;

describe.each(PLATFORMS)('client routes: code methods and display data (%s)', (platform) => {
  const suite = sandboxSuite({
    freezeClock: false,
    demoAccount: {
      enabledMethods: ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'],
    },
  });
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
        history: {},
      },
    });
  });

  async function start(method: string, phone = nextPhone()) {
    const res = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method });
    expect(res.status).toBe(201);
    const requestId = sb.sessionsFor(phone)[0].request_id as string;
    return { res, phone, requestId, id: res.body.verification_id as string };
  }

  it('flash_call: the code is the tail of the incoming number', async () => {
    const { res, requestId, id } = await start('flash_call');
    expect(res.body.code_length).toEqual(expect.any(Number));
    await sb.deliver(requestId);
    const session = sb.getSession(requestId)!;
    const code = String(session.incoming_number).slice(-Number(res.body.code_length));
    const check = await call(host.url, 'POST', '/verification/check', { verification_id: id, code });
    expect(check.body).toMatchObject({ status: 'verified', verified: true });
  });

  it('msgr1_otp: accepted under its schema name too, answers with the canonical name', async () => {
    const { res, requestId, id } = await start('msgr1');
    expect(res.body.method).toBe('msgr1_otp');
    await sb.deliver(requestId);
    const check = await call(host.url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.body.verified).toBe(true);
  });

  it('msgr2_bot: deep link, no code field until the number is shared in the bot', async () => {
    const { res, phone, requestId, id } = await start('msgr2_bot');
    expect(res.body.deep_link).toMatch(/^https:\/\/.+\?start=.+/);
    expect(res.body.awaiting_code).toBe(false);
    await sb.share(requestId, phone);
    const status = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(status.body).toMatchObject({
      status: 'delivered',
      awaiting_code: true,
      deep_link: res.body.deep_link,
    });
    const check = await call(host.url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.body.verified).toBe(true);
  });

  it('operator_id with SMS fallback: wait, code field, check answers sent, then verified by polling', async () => {
    const { res, phone, requestId, id } = await start('operator_id');
    expect(res.body.awaiting_code).toBe(false);
    const early = await call(host.url, 'POST', '/verification/check', { verification_id: id, code: '1234' });
    expect(early.status).toBe(409);
    expect(early.body).toMatchObject({ error_code: 'not_pending', status: 409, verification_status: 'sent' });
    await sb.operator(requestId, 'fallback');
    await sb.advance(3000);
    const waiting = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(waiting.body).toMatchObject({ status: 'sent', awaiting_code: true });
    const check = await call(host.url, 'POST', '/verification/check', {
      verification_id: id,
      code: sb.getSession(requestId)!.code,
    });
    expect(check.status).toBe(200);
    expect(check.body).toMatchObject({ status: 'sent', verified: false });
    // The code accepted, the operator's result still to come: the history holds no right code yet.
    const checked = (await host.app.get(VerificationHistory).list({ phoneNumber: phone })).filter(
      (e) => e.kind === 'check',
    );
    expect(checked.map((e) => [e.status, e.check])).toEqual([['sent', undefined]]);
    await sb.advance(3000);
    const done = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(done.body.status).toBe('verified');
    expect(host.events.filter((e) => e.requestId === requestId).map((e) => e.event)).toEqual([
      'verification.code_required',
      'verification.verified',
    ]);
  });

  it('operator_id approved on the SIM: verified with no code', async () => {
    const { requestId, id } = await start('operator_id');
    await sb.operator(requestId, 'approve');
    const status = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(status.body).toMatchObject({ status: 'verified', awaiting_code: false });
  });

  it('a reload resumes: status gives back what the page needs to redraw the step', async () => {
    const { res, id } = await start('reverse_flash_call');
    const status = await call(host.url, 'GET', `/verification/status/${id}`);
    expect(status.body).toMatchObject({
      verification_id: id,
      method: 'reverse_flash_call',
      status: 'sent',
      number_to_call: res.body.number_to_call,
      poll_interval_ms: 1500,
      awaiting_code: false,
      expires_at: res.body.expires_at,
      verified_at: null,
    });
    expect(status.body).not.toHaveProperty('cost');
  });
});

describe.each(PLATFORMS)('client routes: the methods offered by default (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { enabledMethods: ['sms', 'flash_call'] } });
  let sb: VerificationSandbox;
  let host: TestApp | undefined;

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    await host?.close();
    host = undefined;
  });

  const boot = async (extra: Record<string, unknown> = {}): Promise<TestApp> =>
    createTestApp({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        limits: { enabled: false },
        reconcile: { enabled: false },
        ...extra,
      },
    });
  const offered = async (): Promise<unknown[]> => {
    const res = await call(host!.url, 'GET', '/verification/methods');
    expect(res.status).toBe(200);
    return (res.body.methods as { method: string }[]).map((m) => m.method);
  };

  it('offers only what the account can use (its price list), and refuses another method before paying', async () => {
    host = await boot();
    expect(await offered()).toEqual(['flash_call', 'sms']);
    const posts = sb.requestCount('POST /v1/verify');
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'msgr2_bot',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error_code: 'method_not_available',
      available_methods: ['flash_call', 'sms'],
    });
    // A method the module does not know at all: the same list, what the account can use (not every method
    // the module knows).
    const unknown = await call(host.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'carrier_pigeon',
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toMatchObject({
      error_code: 'method_not_available',
      available_methods: ['flash_call', 'sms'],
    });
    expect(sb.requestCount('POST /v1/verify')).toBe(posts);
    expect(
      (await call(host.url, 'POST', '/verification/start', { phone_number: nextPhone(), method: 'sms' }))
        .status,
    ).toBe(201);
  });

  it('methods given by the host are offered as given, and the price list is not read for them', async () => {
    host = await boot({ methods: ['sms', 'msgr2_bot'] });
    const reads = sb.requestCount('GET /v1/prices');
    expect(await offered()).toEqual(['sms', 'msgr2_bot']);
    expect(sb.requestCount('GET /v1/prices')).toBe(reads);
  });

  it('while the price list cannot be read, every default method is offered; it is asked again after 30 s', async () => {
    sb.addFault({ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 });
    host = await boot({
      api: {
        baseUrl: sb.url,
        apiKey: sb.demoAccount.apiKey,
        apiSecret: sb.demoAccount.apiSecret,
        maxRetries: 0,
      },
    });
    const all = ['reverse_flash_call', 'flash_call', 'msgr1_otp', 'msgr2_bot', 'sms', 'operator_id'];
    expect(await offered()).toEqual(all);
    const reads = sb.requestCount('GET /v1/prices');
    expect(await offered()).toEqual(all);
    expect(sb.requestCount('GET /v1/prices')).toBe(reads); // no read per request during an outage
    sb.clearFaults();
    await sb.advance(30_000);
    expect(await offered()).toEqual(['flash_call', 'sms']);
  });
});
