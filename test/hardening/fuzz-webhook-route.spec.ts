import { beforeAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { hostRefusesJson, junk, printable, withOwn } from './support/fuzz-inputs.js';
import { expectProblem4xx, isProblem, send } from './support/responses.js';
import { signWebhook } from './support/webhook-signer.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const TIMEOUT_MS = 120_000;
const WEBHOOK_SECRET = `whsec_${Buffer.from('fuzz-webhook-secret-0123456789ab').toString('base64')}`;
const OTHER_SECRET = `whsec_${Buffer.from('another-secret-not-the-module-one').toString('base64')}`;

/**
 * Property-based fuzzing of the webhook route. Requests that are not signed with the module's
 * secret (no headers, garbage headers, stale or future timestamps, other secrets, signatures of
 * another body) are 401 `invalid_signature` before anything happens. Correctly signed garbage is a
 * 400 problem, or a 200 `ignored` when it names no session of this deployment. Neither reaches the
 * API or emits an event. An unhandled rejection fails the running test (jest-circus).
 */
describe.each(PLATFORMS)('hardening: fuzzing the webhook route (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { webhookSecret: WEBHOOK_SECRET } });
  let sb: VerificationSandbox;
  let host: TestApp;
  const url = (): string => `${host.url}/verification/webhooks`;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        webhooks: { secret: WEBHOOK_SECRET },
        clock: () => sb.now(),
        limits: { enabled: false },
        reconcile: { enabled: false },
      },
    });
    const started = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123401001',
      method: 'sms',
    });
    expect(started.status).toBe(201);
    sb.resetRequestCounts();
  });

  const nowSeconds = (): number => Math.floor(sb.now() / 1000);
  const envelope = fc.record({
    type: fc.oneof(
      fc.constantFrom(
        'verification.verified',
        'verification.failed',
        'verification.expired',
        'verification.code_required',
      ),
      junk,
    ),
    timestamp: fc.oneof(fc.constant(new Date().toISOString()), junk),
    data: fc.oneof(
      fc.record({
        request_id: fc.oneof(fc.uuid(), fc.stringMatching(/^[A-Za-z0-9_-]{1,100}$/), junk),
        phone_number: fc.oneof(fc.constant('+79123401001'), junk),
        status: fc.oneof(fc.constantFrom('verified', 'failed', 'expired', 'sent'), junk),
      }),
      junk,
    ),
  });
  const body = fc.oneof(
    envelope,
    junk,
    envelope.chain((e) =>
      fc
        .constantFrom('__proto__', 'constructor', 'prototype')
        .map((key) => withOwn({ ...e }, key, { polluted: true })),
    ),
  );
  const header = fc.oneof(
    fc.constant(undefined),
    fc.string({ unit: 'binary-ascii', maxLength: 120 }).map(printable),
  );

  it(
    `${RUNS} unsigned, forged, stale and foreign-signed deliveries are refused and reach nothing`,
    async () => {
      const attempt = fc.record({
        body,
        kind: fc.constantFrom(
          'none',
          'garbage',
          'stale',
          'future',
          'other-secret',
          'other-body',
          'v2',
          'no-id',
        ),
        id: header,
        timestamp: header,
        signature: header,
        // Past the 300 s tolerance by two seconds: the clock may cross a second between signing and
        // checking, which brings a future timestamp one second closer (301 s then passes as 300).
        skew: fc.integer({ min: 302, max: 10_000_000 }),
      });
      await fc.assert(
        fc.asyncProperty(attempt, async (a) => {
          const text = JSON.stringify(a.body);
          const signed = (secret: string, ts = nowSeconds(), signedBody = text) =>
            signWebhook(secret, signedBody, `msg_${randomBytes(8).toString('hex')}`, ts).headers;
          const headers: Record<string, string | undefined> =
            a.kind === 'none'
              ? {}
              : a.kind === 'garbage'
                ? { 'webhook-id': a.id, 'webhook-timestamp': a.timestamp, 'webhook-signature': a.signature }
                : a.kind === 'stale'
                  ? signed(WEBHOOK_SECRET, nowSeconds() - a.skew)
                  : a.kind === 'future'
                    ? signed(WEBHOOK_SECRET, nowSeconds() + a.skew)
                    : a.kind === 'other-secret'
                      ? signed(OTHER_SECRET)
                      : a.kind === 'other-body'
                        ? signed(WEBHOOK_SECRET, nowSeconds(), `${text} `)
                        : a.kind === 'v2'
                          ? {
                              ...signed(WEBHOOK_SECRET),
                              'webhook-signature': signed(WEBHOOK_SECRET)['webhook-signature']!.replace(
                                'v1,',
                                'v2,',
                              ),
                            }
                          : { ...signed(WEBHOOK_SECRET), 'webhook-id': undefined };
          const clean = Object.fromEntries(
            Object.entries(headers).filter(([, v]) => v !== undefined),
          ) as Record<string, string>;
          const res = await send(url(), 'POST', text, { ...clean, 'content-type': 'application/json' });
          if (hostRefusesJson(platform, a.body)) {
            expect(res.status).toBe(400);
          } else {
            const problem = expectProblem4xx(res);
            expect({ status: res.status, code: problem.error_code }).toEqual({
              status: 401,
              code: 'invalid_signature',
            });
          }
          expect(res.text).not.toContain(WEBHOOK_SECRET.slice(6));
          expect(sb.requestCount()).toBe(0);
          expect(host.events).toEqual([]);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );

  it(
    `${RUNS} correctly signed bodies of garbage are a 400 or ignored, never a call or an event`,
    async () => {
      await fc.assert(
        fc.asyncProperty(body, async (payload) => {
          const text = JSON.stringify(payload);
          const { headers } = signWebhook(
            WEBHOOK_SECRET,
            text,
            `msg_${randomBytes(8).toString('hex')}`,
            nowSeconds(),
          );
          const res = await send(url(), 'POST', text, headers);
          if (hostRefusesJson(platform, payload)) {
            expect(res.status).toBe(400);
            expect(isProblem(res)).toBe(false);
          } else if (res.status === 200) {
            expect(JSON.parse(res.text)).toEqual({ received: true, result: 'ignored' });
          } else {
            expect(expectProblem4xx(res).error_code).toBe('validation_error');
          }
          expect(sb.requestCount()).toBe(0);
          expect(host.events).toEqual([]);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );

  it('signed bodies that are not JSON, or not application/json, are refused without a 5xx', async () => {
    for (const [text, contentType] of [
      ['{"type": "verification.verified", "data": {"request_id": "x"', 'application/json'],
      ['type=verification.verified&data[request_id]=x', 'application/x-www-form-urlencoded'],
      ['<xml/>', 'text/xml'],
      ['', 'application/json'],
    ] as const) {
      const { headers } = signWebhook(
        WEBHOOK_SECRET,
        text,
        `msg_${randomBytes(8).toString('hex')}`,
        nowSeconds(),
      );
      const res = await send(url(), 'POST', text, { ...headers, 'content-type': contentType });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
    }
    expect(sb.requestCount()).toBe(0);
    expect((await call(host.url, 'GET', '/verification/methods')).status).toBe(200);
  });
});
