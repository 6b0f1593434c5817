import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { FlakyListener } from '../events/flaky-listener.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  CapturingLogger,
  eventsOf,
  lastEventOf,
  payloadFor,
  postWebhook,
  signed,
  startAccountHost,
  startSession,
} from './harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';
const SECRET = `whsec_${Buffer.from('webhook-answers-secret-0123456789').toString('base64')}`;
/** A session id of the right shape that no deployment started. */
const UNKNOWN = '4d7c2a1e-0000-4000-8000-00000000a115';

/**
 * What the sender and the operator see of each answer of the webhook route: its status, its problem's
 * error_code, field and `Retry-After`, the one log line per delivery, and how long a webhook-id is
 * remembered (one tick before and after its bound on the sandbox's clock). The host is on an account of
 * its own: only the deliveries a test makes reach it.
 */
describe.each(PLATFORMS)('webhook route: answers, log lines and bounds (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  const logger = new CapturingLogger();
  const route = (): string => `${host.url}/verification/webhooks`;
  const ts = (): number => Math.floor(sb.now() / 1000);
  const deliver = (body: unknown, options: { id?: string; timestampSeconds?: number } = {}) =>
    postWebhook(route(), signed(SECRET, body, { timestampSeconds: ts(), ...options }));
  /** The route's one line about a delivery (its webhook_id), with its level. */
  const linesOf = (id: string) =>
    logger.lines
      .filter((l) => l.message.startsWith('webhook ') && l.message.includes(`webhook_id=${id} `))
      .map((l) => `${l.level}: ${l.message.replace(/ latency_ms=\d+$/, '')}`);

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      startAccountHost(platform, sb, {
        module: { webhooks: { secret: SECRET } },
        logger,
        providers: [FlakyListener],
      }),
    );
  });

  it('logs each answer once with its result and HTTP status; a failure at warn, a refusal not', async () => {
    const forged = await postWebhook(
      route(),
      signed(`whsec_${Buffer.from('not the secret').toString('base64')}`, payloadFor('x.y', UNKNOWN), {
        id: 'w_forged',
        timestampSeconds: ts(),
      }),
    );
    expect(forged.body).toMatchObject({
      status: 401,
      error_code: 'invalid_signature',
      detail: 'The webhook signature is missing, wrong or stale',
    });
    const noId = await deliver({ type: 'verification.verified', data: {} }, { id: 'w_noid' });
    expect(noId.status).toBe(400);
    const ignored = await deliver(payloadFor('verification.verified', UNKNOWN), { id: 'w_ign' });
    expect(ignored.body).toEqual({ received: true, result: 'ignored' });
    // The operator reads why (never the sender).
    expect(logger.at('warn')).toContain('webhook refused: invalid signature (no_matching_signature)');
    const stale = await postWebhook(
      route(),
      signed(SECRET, payloadFor('x.y', UNKNOWN), { timestampSeconds: ts() - 301 }),
    );
    expect(stale.status).toBe(401);
    expect(logger.at('warn')).toContain('webhook refused: invalid signature (stale_timestamp)');
    expect(linesOf('w_forged')).toEqual([
      'log: webhook route=webhook result=invalid_signature webhook_id=w_forged http_status=401',
    ]);
    expect(linesOf('w_noid')).toEqual([
      'warn: webhook route=webhook result=failed webhook_id=w_noid http_status=400',
    ]);
    expect(linesOf('w_ign')).toEqual([
      'log: webhook route=webhook result=ignored webhook_id=w_ign http_status=200',
    ]);
    // The time the route took, in milliseconds: a few, never a clock reading (a refusal's too).
    for (const id of ['w_ign', 'w_forged']) {
      const latency = logger.lines
        .map((l) => new RegExp(`webhook_id=${id} .*latency_ms=(\\d+)$`).exec(l.message)?.[1])
        .find((v) => v !== undefined);
      expect({ id, fast: Number(latency) < 30_000 }).toEqual({ id, fast: true });
    }
  });

  it('answers 503 with Retry-After: 5 while the API is down, and says so at warn', async () => {
    const s = await startSession(host, sb, 'sms');
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 503, count: 0 });
    try {
      const res = await deliver(payloadFor('verification.verified', s.requestId), { id: 'w_down' });
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        status: 503,
        error_code: 'service_unavailable',
        detail: 'The webhook could not be processed now; retry later',
      });
      expect(res.retryAfter).toBe('5');
    } finally {
      sb.clearFaults();
    }
    expect(linesOf('w_down')).toEqual([
      'warn: webhook route=webhook result=failed webhook_id=w_down http_status=503',
    ]);
    // The operator reads the upstream failure (never a listener's, never the store's).
    expect(logger.at('warn').filter((m) => m.startsWith('webhook answered 503: upstream'))).toEqual([
      'webhook answered 503: upstream getSession answered 503 service_unavailable',
    ]);
    // Its webhook-id was freed: the sender's retry is handled.
    const retry = await deliver(payloadFor('verification.verified', s.requestId), { id: 'w_down' });
    expect(retry.body).toEqual({ received: true, result: 'deferred' });
  });

  it('a session the API does not know is acknowledged as ignored, with a warning, and nothing emitted', async () => {
    const s = await startSession(host, sb, 'sms');
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 404, count: 1 });
    const res = await deliver(payloadFor('verification.verified', s.requestId));
    expect(res.body).toEqual({ received: true, result: 'ignored' });
    expect(logger.at('warn')).toContain(
      'a webhook named a session the API does not know; acknowledged, nothing emitted',
    );
    expect(eventsOf(host, s.requestId)).toEqual([]);
  });

  it('a signed empty body is a 400 naming no field; a body without request_id names data.request_id', async () => {
    const empty = await postWebhook(route(), {
      ...signed(SECRET, '', { timestampSeconds: ts() }),
      body: '',
    });
    expect(empty.status).toBe(400);
    // Fastify refuses an empty JSON body itself, before the route (its own 400).
    if (platform === 'express') {
      expect(empty.contentType).toMatch(/^application\/problem\+json/);
      expect(empty.body).toMatchObject({
        status: 400,
        error_code: 'validation_error',
        detail: 'The webhook body is not JSON',
        errors: [{ field: null, message: 'body must be JSON' }],
      });
    }
    const noId = await deliver({ type: 'verification.verified', data: {} });
    expect(noId.body).toMatchObject({
      status: 400,
      detail: 'The webhook names no request_id or event',
      errors: [{ field: 'data.request_id', message: 'request_id and type are required' }],
    });
    const list = await deliver([{ type: 'verification.verified', request_id: UNKNOWN }]);
    expect(list.status).toBe(400);
    // JSON's null is a body too, naming nothing: the same 400, never a failure of the module (503).
    const nothing = await deliver(null);
    expect(nothing.status).toBe(400);
    // Express's JSON parser refuses a bare null itself (strict), before the route (its own 400).
    if (platform === 'fastify') expect(nothing.body.error_code).toBe('validation_error');
  });

  it('takes a request_id and an event of 100 characters, refuses 101', async () => {
    const answer = async (requestId: string, event: string) => {
      const res = await deliver({ type: event, data: { request_id: requestId } });
      return res.status === 200 ? res.body.result : res.status;
    };
    expect(await answer('a'.repeat(100), 'verification.verified')).toBe('ignored');
    expect(await answer('a'.repeat(101), 'verification.verified')).toBe(400);
    expect(await answer(UNKNOWN, 'e'.repeat(100))).toBe('ignored');
    expect(await answer(UNKNOWN, 'e'.repeat(101))).toBe(400);
    expect(await answer(UNKNOWN, '')).toBe(400);
    expect(await answer('', 'verification.verified')).toBe(400);
  });

  it("reads data.request_id before the body's own, and type before event", async () => {
    const s = await startSession(host, sb, 'sms');
    const res = await deliver({
      type: 'verification.code_required',
      event: 'verification.verified',
      request_id: UNKNOWN,
      data: { request_id: s.requestId },
    });
    expect(res.body).toEqual({ received: true, result: 'processed' });
    const flat = await deliver({
      type: 'not an event!',
      event: 'verification.verified',
      request_id: UNKNOWN,
    });
    expect(flat.body).toEqual({ received: true, result: 'ignored' });
    // A data.request_id that is not text is passed over for the body's own.
    const numeric = await deliver({
      type: 'verification.verified',
      data: { request_id: 42 },
      request_id: UNKNOWN,
    });
    expect(numeric.body).toEqual({ received: true, result: 'ignored' });
  });

  it('a settled session: a new delivery about it is a duplicate and emits nothing more', async () => {
    const s = await startSession(host, sb, 'reverse_flash_call');
    await sb.call(s.requestId, s.phone);
    const first = await deliver(payloadFor('verification.verified', s.requestId));
    expect(first.body).toEqual({ received: true, result: 'processed' });
    const second = await deliver(payloadFor('verification.verified', s.requestId));
    expect(second.body).toEqual({ received: true, result: 'duplicate' });
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it("a forged delivery carrying a genuine delivery's webhook-id is refused without holding the id: the genuine one is processed", async () => {
    const s = await startSession(host, sb, 'reverse_flash_call');
    await sb.call(s.requestId, s.phone);
    const id = 'w_forged_first';
    const forged = await postWebhook(
      route(),
      signed(
        `whsec_${Buffer.from('an attacker key').toString('base64')}`,
        payloadFor('verification.verified', s.requestId),
        {
          id,
          timestampSeconds: ts(),
        },
      ),
    );
    expect(forged.status).toBe(401);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    const genuine = await deliver(payloadFor('verification.verified', s.requestId), { id });
    expect(genuine.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('a delivery in progress holds its webhook-id for 30 s on the clock: a copy is a duplicate until then, handled at 30 s', async () => {
    const s = await startSession(host, sb, 'sms');
    const id = 'w_lease';
    const copy = async () => (await deliver(payloadFor('verification.verified', s.requestId), { id })).body;
    // The first delivery waits on a slow API (real time) while the sandbox's clock moves.
    sb.addFault({ route: GET_SESSION, kind: 'latency', latency_ms: 2000, count: 1 });
    const gets = sb.requestCount(GET_SESSION);
    const first = copy();
    while (sb.requestCount(GET_SESSION) === gets) await new Promise((r) => setTimeout(r, 10));
    expect(await copy()).toEqual({ received: true, result: 'duplicate' });
    await sb.advance(29_999);
    expect(await copy()).toEqual({ received: true, result: 'duplicate' });
    await sb.advance(1);
    // A delivery that took longer than the lease is taken to have crashed: the copy is handled.
    expect(await copy()).toEqual({ received: true, result: 'deferred' });
    expect(await first).toEqual({ received: true, result: 'deferred' });
  });

  it('a host listener that throws: 503 with Retry-After: 5, a warning naming the event, and the retry emits it', async () => {
    const listener = host.app.get(FlakyListener);
    listener.failFirst = true;
    try {
      const s = await startSession(host, sb, 'reverse_flash_call');
      await sb.call(s.requestId, s.phone);
      const res = await deliver(payloadFor('verification.verified', s.requestId), { id: 'w_listen' });
      expect(res.status).toBe(503);
      expect(res.retryAfter).toBe('5');
      expect(logger.at('warn')).toContain(
        'webhook answered 503: a listener of verification.verified failed; the sender will retry',
      );
      const retry = await deliver(payloadFor('verification.verified', s.requestId), { id: 'w_listen' });
      expect(retry.body).toEqual({ received: true, result: 'processed' });
      expect(listener.of(s.requestId)).toEqual(['verification.verified!', 'verification.verified']);
      // The event still owed is emitted by the webhook that brought it back, and says so.
      expect(lastEventOf(host, s.requestId)).toMatchObject({
        event: 'verification.verified',
        source: 'webhook',
      });
    } finally {
      listener.failFirst = false;
    }
  });

  it('takes a JSON content type in any case and with spaces before its parameters', async () => {
    for (const contentType of ['Application/JSON', 'application/json ; charset=utf-8']) {
      const delivery = signed(SECRET, payloadFor('verification.verified', UNKNOWN), {
        timestampSeconds: ts(),
      });
      const res = await postWebhook(route(), {
        headers: { ...delivery.headers, 'content-type': contentType },
        body: delivery.body,
      });
      expect({ contentType, status: res.status, body: res.body }).toEqual({
        contentType,
        status: 200,
        body: { received: true, result: 'ignored' },
      });
    }
    const text = signed(SECRET, 'verified!', { timestampSeconds: ts() });
    const refused = await postWebhook(route(), {
      headers: { ...text.headers, 'content-type': 'text/plain' },
      body: text.body,
    });
    expect(refused.body).toMatchObject({
      status: 415,
      error_code: 'unsupported_media_type',
      detail: 'A webhook body must be application/json',
      errors: [{ field: null, message: 'content-type must be application/json' }],
    });
  });

  it('remembers a handled webhook-id for an hour: the same id re-signed at 3,599.999 s is a duplicate, at 3,600 s handled', async () => {
    const id = 'w_hour';
    expect((await deliver(payloadFor('verification.verified', UNKNOWN), { id })).body.result).toBe('ignored');
    await sb.advance(3_599_999);
    expect((await deliver(payloadFor('verification.verified', UNKNOWN), { id })).body.result).toBe(
      'duplicate',
    );
    await sb.advance(1);
    expect((await deliver(payloadFor('verification.verified', UNKNOWN), { id })).body.result).toBe('ignored');
  });
});

describe.each(PLATFORMS)('webhook route: a wider tolerance (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() =>
      startAccountHost(platform, sb, {
        module: { webhooks: { secret: SECRET, toleranceSeconds: 2000 } },
      }),
    );
  });

  it('a delivery stamped 2,000 s ahead is a duplicate until twice the tolerance has passed, then handled, then stale', async () => {
    // Lined up on a second, so that the timestamp's bound and the id's are the same moment.
    await sb.advance(1000 - (sb.now() % 1000));
    const delivery = signed(SECRET, payloadFor('verification.verified', UNKNOWN), {
      id: 'w_wide',
      timestampSeconds: sb.now() / 1000 + 2000,
    });
    const send = async () => {
      const res = await postWebhook(`${host.url}/verification/webhooks`, delivery);
      return res.status === 200 ? res.body.result : res.status;
    };
    expect(await send()).toBe('ignored');
    await sb.advance(3_999_999);
    expect(await send()).toBe('duplicate');
    await sb.advance(1);
    expect(await send()).toBe('ignored');
    await sb.advance(1000);
    expect(await send()).toBe(401);
  });
});
