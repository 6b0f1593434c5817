import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SandboxControlClient, SandboxControlError, VerificationSandbox } from '../../src/testing/index.js';
import { startSandboxProcess } from '../hardening/support/sandbox-process.js';

const API_KEY = 'client_key';
const API_SECRET = 'client-secret';
const WEBHOOK_SECRET = `whsec_${Buffer.from('control-client-webhook-secret').toString('base64')}`;
const UNKNOWN_ID = '6f1c1d9e-8b7a-4c2e-9d0f-1a2b3c4d5e6f';

interface Sandbox {
  url: string;
  stop(): Promise<void>;
}

/** The same sandbox two ways: the CLI in its own process (as a host's tests would run it) and in-process. */
const SANDBOXES: [string, () => Promise<Sandbox>][] = [
  [
    'a sandbox started with the CLI in another process',
    () =>
      startSandboxProcess({
        apiKey: API_KEY,
        apiSecret: API_SECRET,
        webhookSecret: WEBHOOK_SECRET,
        balance: 1000,
      }),
  ],
  [
    'an in-process sandbox',
    async () => {
      const sb = await VerificationSandbox.start({
        demoAccount: { apiKey: API_KEY, apiSecret: API_SECRET, webhookSecret: WEBHOOK_SECRET },
      });
      return { url: sb.url, stop: () => sb.close() };
    },
  ],
];

/** Every key a session carries, in camelCase: a key the client forgot to convert fails here. */
const SESSION_KEYS = [
  'apiKey',
  'attemptsRemaining',
  'awaitingCode',
  'charged',
  'code',
  'codeLength',
  'cost',
  'createdAt',
  'deepLink',
  'expiresAt',
  'incomingNumber',
  'method',
  'numberToCall',
  'operatorState',
  'phoneNumber',
  'requestId',
  'sharedPhoneNumber',
  'status',
  'verifiedAt',
];

describe.each(SANDBOXES)('SandboxControlClient against %s', (_name, startSandbox) => {
  let sandbox: Sandbox;
  let client: SandboxControlClient;
  let receiver: Server;
  let receiverUrl: string;
  let phoneCounter = 0;

  beforeAll(async () => {
    sandbox = await startSandbox();
    // A trailing slash, as a URL copied from a config might have it.
    client = new SandboxControlClient(`${sandbox.url}/`);
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(200).end());
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks`;
  }, 60_000);
  afterAll(async () => {
    await sandbox?.stop();
    receiver?.closeAllConnections();
    await new Promise((resolve) => receiver?.close(resolve));
  });

  const phone = (): string => `+7999100${String((phoneCounter += 1)).padStart(4, '0')}`;

  /** The verification API itself, with Basic auth: the channel the client's effects are checked through. */
  async function api(
    method: string,
    path: string,
    body?: unknown,
    creds = { apiKey: API_KEY, apiSecret: API_SECRET },
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${sandbox.url}${path}`, {
      method,
      headers: {
        authorization: `Basic ${Buffer.from(`${creds.apiKey}:${creds.apiSecret}`).toString('base64')}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  async function start(method: string, phoneNumber = phone()): Promise<string> {
    const res = await api('POST', '/v1/verify', { phone_number: phoneNumber, method });
    if (res.status !== 201) throw new Error(`start ${method} answered ${res.status}`);
    return res.body.request_id as string;
  }

  const apiStatus = async (requestId: string): Promise<unknown> =>
    (await api('GET', `/v1/verify/${requestId}`)).body.status;

  async function caught(action: Promise<unknown>): Promise<SandboxControlError> {
    const err = await action.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SandboxControlError);
    return err as SandboxControlError;
  }

  it('getSession shows the session in camelCase with the code the user received', async () => {
    const phoneNumber = phone();
    const id = await start('sms', phoneNumber);
    const session = await client.getSession(id.toUpperCase());
    expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
    expect(session).toMatchObject({
      requestId: id,
      apiKey: API_KEY,
      phoneNumber,
      method: 'sms',
      status: 'sent',
      codeLength: 6,
      attemptsRemaining: 3,
      awaitingCode: true,
      cost: { amount: expect.any(Number), currency: 'RUB' },
    });
    // The code is the one the API accepts.
    expect((await api('POST', '/v1/verify/check', { request_id: id, code: session.code })).status).toBe(200);
    expect(await apiStatus(id)).toBe('verified');
  });

  it('sessionsFor lists a phone number’s sessions, newest first', async () => {
    const phoneNumber = phone();
    const first = await start('sms', phoneNumber);
    const second = await start('flash_call', phoneNumber);
    const sessions = await client.sessionsFor(phoneNumber);
    expect(sessions.map((s) => s.requestId)).toEqual([second, first]);
    expect(Object.keys(sessions[0]!).sort()).toEqual(SESSION_KEYS);
    expect(await client.sessionsFor(phone())).toEqual([]);
  });

  it('deliver sends the flash call, whose caller ID the session then shows', async () => {
    const id = await start('flash_call');
    const delivered = await client.deliver(id);
    expect(delivered).toMatchObject({ requestId: id, status: 'delivered', result: 'delivered' });
    expect(delivered.incomingNumber).toMatch(/^\+\d+$/);
    expect(delivered.detail).toEqual(expect.any(String));
    expect(await apiStatus(id)).toBe('delivered');
    expect((await client.deliver(id)).result).toBe('already_delivered');
  });

  it('share sends the msgr2 code only for the number being verified', async () => {
    const phoneNumber = phone();
    const id = await start('msgr2_bot', phoneNumber);
    const other = await client.share(id, '+79991999999');
    expect(other).toMatchObject({ result: 'ignored', code: null, sharedPhoneNumber: '+79991999999' });
    const same = await client.share(id, phoneNumber);
    expect(same).toMatchObject({ result: 'delivered', status: 'delivered', sharedPhoneNumber: phoneNumber });
    expect(await apiStatus(id)).toBe('delivered');
  });

  it('call verifies a reverse flash call from the number being verified only', async () => {
    const phoneNumber = phone();
    const id = await start('reverse_flash_call', phoneNumber);
    expect((await client.getSession(id)).numberToCall).toMatch(/^\+\d+$/);
    expect((await client.call(id, '+79991999998')).result).toBe('ignored');
    expect(await apiStatus(id)).toBe('sent');
    expect(await client.call(id, phoneNumber)).toMatchObject({ result: 'verified', status: 'verified' });
    expect(await apiStatus(id)).toBe('verified');
  });

  it('operator approves, denies, or falls back to an SMS code', async () => {
    const approved = await start('operator_id');
    expect(await client.operator(approved, 'approve')).toMatchObject({
      result: 'verified',
      operatorState: 'approved',
    });
    expect(await apiStatus(approved)).toBe('verified');

    const denied = await start('operator_id');
    expect((await client.operator(denied, 'fail')).result).toBe('failed');
    expect(await apiStatus(denied)).toBe('failed');

    const fallback = await start('operator_id');
    const sms = await client.operator(fallback, 'fallback');
    expect(sms).toMatchObject({ result: 'code_required', operatorState: 'sms_fallback', awaitingCode: true });
    expect(sms.code).toMatch(/^\d{6}$/);
  });

  it('fail ends a session with a terminal error', async () => {
    const id = await start('sms');
    expect(await client.fail(id)).toMatchObject({ requestId: id, status: 'failed' });
    expect(await apiStatus(id)).toBe('failed');
  });

  it('clock reads the sandbox clock and advance moves it, expiring what is due', async () => {
    const id = await start('sms');
    const before = await client.clock();
    expect(before.nowIso).toBe(new Date(before.now).toISOString());
    const after = await client.advance(301_000);
    expect(after.now).toBeGreaterThanOrEqual(before.now + 301_000);
    expect(after.nowIso).toBe(new Date(after.now).toISOString());
    expect(await apiStatus(id)).toBe('expired');
  });

  it('createAccount, getAccount and updateAccount manage accounts the API then honours', async () => {
    const created = await client.createAccount({
      apiKey: `acct_${phoneCounter}`,
      apiSecret: 'acct-secret',
      balance: 12.34,
      enabledMethods: ['sms', 'msgr1'],
      codeAttempts: 5,
      rateLimitPerSecond: 50,
    });
    const creds = { apiKey: created.apiKey, apiSecret: 'acct-secret' };
    expect(created).toMatchObject({
      apiSecret: 'acct-secret',
      webhookSecret: expect.stringMatching(/^whsec_/),
      webhookUrl: null,
      balance: { amount: 12.34, currency: 'RUB' },
      enabledMethods: ['msgr1_otp', 'sms'],
      autoDeliver: false,
      codeAttempts: 5,
      rateLimitPerSecond: 50,
      disabled: false,
    });
    expect(created.prices.sms).toEqual({ amount: expect.any(Number), currency: 'RUB' });
    expect((await api('GET', '/v1/balance', undefined, creds)).body.balance).toEqual(created.balance);

    const updated = await client.updateAccount(created.apiKey, { balance: 50, webhookUrl: receiverUrl });
    expect(updated).toMatchObject({ balance: { amount: 50, currency: 'RUB' }, webhookUrl: receiverUrl });
    expect((await api('GET', '/v1/balance', undefined, creds)).body.balance).toEqual({
      amount: 50,
      currency: 'RUB',
    });
    expect(await client.getAccount(created.apiKey)).toEqual(updated);
  });

  it('addFault answers API requests with the fault, and clearFaults removes it', async () => {
    await client.addFault({
      route: 'GET /v1/balance',
      kind: 'status',
      status: 429,
      retryAfterS: 7,
      count: 0,
    });
    const limited = await fetch(`${sandbox.url}/v1/balance`);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('7');
    expect((await api('GET', '/v1/balance')).status).toBe(429);
    await client.clearFaults();
    expect((await api('GET', '/v1/balance')).status).toBe(200);
  });

  it('webhook faults and the webhook log, narrowed to one session with requestId', async () => {
    await client.updateAccount(API_KEY, { webhookUrl: receiverUrl });
    try {
      await client.addFault({ webhooks: { dropNext: 1 } });
      const dropped = await start('reverse_flash_call');
      const phoneNumber = phone();
      const delivered = await start('reverse_flash_call', phoneNumber);
      await client.call(dropped, (await client.getSession(dropped)).phoneNumber);
      await client.call(delivered, phoneNumber);

      expect(await client.webhookLog(dropped)).toEqual([
        {
          webhookId: expect.stringMatching(/^msg_/),
          event: 'verification.verified',
          requestId: dropped,
          url: receiverUrl,
          attempt: 1,
          status: 'dropped',
          at: expect.any(String),
        },
      ]);
      // The receiver's answer reaches the log once the sandbox has read it.
      const log = await eventually(async () => {
        const entries = await client.webhookLog(delivered.toUpperCase());
        return entries.length > 0 ? entries : undefined;
      });
      expect(log).toEqual([expect.objectContaining({ requestId: delivered, status: 200 })]);
      const all = (await client.webhookLog()).map((d) => d.requestId);
      expect(all).toEqual(expect.arrayContaining([dropped, delivered]));
    } finally {
      await client.updateAccount(API_KEY, { webhookUrl: null });
      await client.clearFaults();
    }
  });

  it('requestCounts counts API requests by route, and resetRequestCounts zeroes them', async () => {
    await client.resetRequestCounts();
    expect(await client.requestCounts()).toEqual({});
    const id = await start('sms');
    await apiStatus(id);
    await apiStatus(id);
    expect(await client.requestCounts()).toEqual({ 'POST /v1/verify': 1, 'GET /v1/verify/:id': 2 });
    await client.resetRequestCounts();
    expect(await client.requestCounts()).toEqual({});
  });

  it('refusals are SandboxControlError with the HTTP status and the problem’s error_code', async () => {
    const unknown = await caught(client.getSession(UNKNOWN_ID));
    expect(unknown).toMatchObject({ status: 404, errorCode: 'not_found', name: 'SandboxControlError' });
    expect(unknown.problem).toMatchObject({ status: 404, error_code: 'not_found' });
    expect((await caught(client.deliver(UNKNOWN_ID))).status).toBe(404);

    const rfc = await start('reverse_flash_call');
    expect(await caught(client.deliver(rfc))).toMatchObject({ status: 409, errorCode: 'not_applicable' });
    expect(await caught(client.call(rfc, 'me'))).toMatchObject({
      status: 400,
      errorCode: 'validation_error',
    });
    expect(await caught(client.advance(-1))).toMatchObject({ status: 400, errorCode: 'validation_error' });
    expect(await caught(client.createAccount({ apiKey: API_KEY }))).toMatchObject({
      status: 409,
      errorCode: 'account_exists',
    });
    expect(await caught(client.getAccount('nobody'))).toMatchObject({ status: 404, errorCode: 'not_found' });
    expect(await caught(client.sessionsFor(''))).toMatchObject({
      status: 400,
      errorCode: 'validation_error',
    });
  });
});

describe('SandboxControlClient without a sandbox behind it', () => {
  it('a sandbox with the control API off: 404 not_found', async () => {
    const sb = await VerificationSandbox.start({ control: false });
    try {
      const err = await new SandboxControlClient(sb.url).clock().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SandboxControlError);
      expect(err).toMatchObject({ status: 404, errorCode: 'not_found' });
    } finally {
      await sb.close();
    }
  });

  it('sends through the given fetch, and an answer that is not JSON is a SandboxControlError', async () => {
    const sent: { url: string; method: string; body?: string }[] = [];
    const client = new SandboxControlClient('http://sandbox.test', {
      fetch: async (url, init) => {
        sent.push({ url, method: init.method, body: init.body });
        return { status: 502, ok: false, text: async () => '<html>Bad Gateway</html>' };
      },
    });
    const err = await client.advance(1000).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SandboxControlError);
    expect(err).toMatchObject({ status: 502, errorCode: undefined });
    expect(sent).toEqual([
      { url: 'http://sandbox.test/_sandbox/clock', method: 'POST', body: '{"advance_ms":1000}' },
    ]);
  });
});

/** Polls until `read` gives a value: only for what the sandbox does on its own (a webhook's answer). */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error('the sandbox never got there');
}
