import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  VerificationApiClient,
  VerificationApiError,
  VerificationApiUnavailableError,
  type VerificationApiClientOptions,
} from '../../src/index.js';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { issuedCode, nextPhone, rejection, SuiteClients } from './sandbox-control.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** Every error row of the spec, as the client reports it. */
describe('VerificationApiClient errors against the sandbox', () => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let client: VerificationApiClient;
  const clients = new SuiteClients();

  function clientFor(
    creds: { apiKey: string; apiSecret: string },
    extra: Partial<VerificationApiClientOptions> = {},
  ) {
    return clients.create({ baseUrl: sb.url, ...creds, ...extra });
  }

  beforeAll(async () => {
    sb = suite.sb;
    client = clientFor(sb.demoAccount);
  });

  afterAll(async () => {
    clients.closeAll();
  });

  it('400 validation_error on initiate, with the problem fields', async () => {
    const e = await rejection(client.initiate({ phoneNumber: '12345', method: 'sms' }));
    expect(e).toBeInstanceOf(VerificationApiError);
    const err = e as VerificationApiError;
    expect(err).toMatchObject({ status: 400, errorCode: 'validation_error', operation: 'initiate' });
    expect(err.title).toEqual(expect.any(String));
    expect(err.detail).toEqual(expect.any(String));
    expect(err.problem).toMatchObject({ status: 400, error_code: 'validation_error' });
    expect(err.attemptsRemaining).toBeUndefined();
    expect(err.message).toBe('Verification API initiate failed: HTTP 400 validation_error');
  });

  it('400 validation_error on a malformed code', async () => {
    const started = await client.initiate({ phoneNumber: nextPhone(), method: 'sms' });
    const e = await rejection(client.check({ requestId: started.requestId, code: '12' }));
    expect(e).toMatchObject({ status: 400, errorCode: 'validation_error', operation: 'check' });
  });

  it('400 invalid_code carries attempts_remaining as attemptsRemaining, down to failed', async () => {
    const started = await client.initiate({ phoneNumber: nextPhone(), method: 'sms' });
    await new SandboxControlClient(sb.url).deliver(started.requestId);
    const right = issuedCode(sb, started.requestId);
    const wrong = right === '000000' ? '111111' : '000000';
    const first = await rejection(client.check({ requestId: started.requestId, code: wrong }));
    expect(first).toBeInstanceOf(VerificationApiError);
    expect(first).toMatchObject({ status: 400, errorCode: 'invalid_code', attemptsRemaining: 2 });
    expect((first as VerificationApiError).problem).toMatchObject({ attempts_remaining: 2 });
    expect(await rejection(client.check({ requestId: started.requestId, code: wrong }))).toMatchObject({
      attemptsRemaining: 1,
    });
    await rejection(client.check({ requestId: started.requestId, code: wrong }));
    expect((await client.getSession(started.requestId)).status).toBe('failed');
  });

  it('401 on a wrong secret', async () => {
    const bad = clientFor({ apiKey: sb.demoAccount.apiKey, apiSecret: 'wrong-secret' });
    const e = await rejection(bad.getBalance());
    expect(e).toBeInstanceOf(VerificationApiError);
    expect(e).toMatchObject({ status: 401, operation: 'getBalance' });
  });

  it('402 insufficient_balance on initiate with an empty balance', async () => {
    const broke = clientFor(await sb.createAccount({ balance: 0 }));
    const e = await rejection(broke.initiate({ phoneNumber: nextPhone(), method: 'sms' }));
    expect(e).toBeInstanceOf(VerificationApiError);
    expect(e).toMatchObject({ status: 402, errorCode: 'insufficient_balance' });
  });

  it('403 without a body is VerificationApiUnavailableError "forbidden"', async () => {
    const disabled = clientFor(await sb.createAccount({ disabled: true }));
    const e = await rejection(disabled.getBalance());
    expect(e).toBeInstanceOf(VerificationApiUnavailableError);
    expect(e).toMatchObject({ reason: 'forbidden', status: 403, operation: 'getBalance' });

    const smsOnly = clientFor(await sb.createAccount({ enabledMethods: ['sms'] }));
    const notEnabled = await rejection(smsOnly.initiate({ phoneNumber: nextPhone(), method: 'operator_id' }));
    expect(notEnabled).toMatchObject({ reason: 'forbidden', status: 403, operation: 'initiate' });
  });

  it('404 not_found for an unknown request id, on getSession and on check', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    expect(await rejection(client.getSession(unknown))).toMatchObject({
      status: 404,
      errorCode: 'not_found',
    });
    expect(await rejection(client.check({ requestId: unknown, code: '123456' }))).toMatchObject({
      status: 404,
      errorCode: 'not_found',
    });
  });

  it('409 not_pending on a check of a resolved session', async () => {
    const started = await client.initiate({ phoneNumber: nextPhone(), method: 'sms' });
    await new SandboxControlClient(sb.url).deliver(started.requestId);
    const code = issuedCode(sb, started.requestId);
    await client.check({ requestId: started.requestId, code });
    const e = await rejection(client.check({ requestId: started.requestId, code }));
    expect(e).toBeInstanceOf(VerificationApiError);
    expect(e).toMatchObject({ status: 409, errorCode: 'not_pending' });
  });

  it('409 not_pending on a check of an expired session (the sandbox default for "not shown")', async () => {
    const started = await client.initiate({ phoneNumber: nextPhone(), method: 'sms', expirySeconds: 60 });
    await sb.advance(61_000);
    expect(await rejection(client.check({ requestId: started.requestId, code: '123456' }))).toMatchObject({
      status: 409,
      errorCode: 'not_pending',
    });
    expect((await client.getSession(started.requestId)).status).toBe('expired');
  });

  it('429 rate_limit_exceeded with Retry-After as retryAfterMs; a POST is not retried', async () => {
    const limited = clientFor(await sb.createAccount({ rateLimitPerSecond: 1 }));
    const before = sb.requestCount('POST /v1/verify');
    // One request per one-second window of the sandbox clock: of three quick calls, at most two can land in
    // different windows, so at least one is refused, whatever the timing.
    let calls = 0;
    let refused: unknown;
    while (refused === undefined && calls < 3) {
      calls += 1;
      refused = await limited.initiate({ phoneNumber: nextPhone(), method: 'sms' }).then(
        () => undefined,
        (e: unknown) => e,
      );
    }
    expect(refused).toBeInstanceOf(VerificationApiError);
    const err = refused as VerificationApiError;
    expect(err).toMatchObject({ status: 429, errorCode: 'rate_limit_exceeded' });
    expect(err.retryAfterMs).toBe(1000);
    expect(sb.requestCount('POST /v1/verify')).toBe(before + calls);
  });
});
