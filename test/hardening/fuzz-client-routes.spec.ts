import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { checkBody, hostRefusesJson, printable, startBody, statusId } from './support/fuzz-inputs.js';
import { expectProblem4xx, isProblem, send, type Answer } from './support/responses.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 500);
const TIMEOUT_MS = 120_000;
const API_SECRET = 'sk_fuzz_7c1e0b9a8d7f6e5c4b3a29180706f5e4';

/**
 * Property-based fuzzing of the four client routes: thousands of generated bodies, headers and
 * ids, each invalid by construction. Every answer is a 4xx (a problem document from the module,
 * or the host parser's own 4xx for bodies it refuses before any route runs), nothing reaches the
 * API, no secret is echoed, and the app still serves afterwards. An unhandled rejection anywhere
 * in the process fails the running test (jest-circus reports it as that test's error).
 */
describe.each(PLATFORMS)('hardening: fuzzing the client routes (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { apiSecret: API_SECRET } });
  let sb: VerificationSandbox;
  let host: TestApp;
  let handles: string[];
  const basic = Buffer.from(`demo_key:${API_SECRET}`).toString('base64');

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      // Protection on (its defaults): refused input must never count against a limit either.
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: API_SECRET },
        clock: () => sb.now(),
        reconcile: { enabled: false },
      },
    });
    handles = [];
    for (const phone of ['+79123400001', '+79123400002', '+79123400003']) {
      const res = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' });
      expect(res.status).toBe(201);
      handles.push(res.body.verification_id as string);
    }
    sb.resetRequestCounts();
  });

  const noLeak = (res: Answer): void => {
    expect(res.text).not.toContain(API_SECRET);
    expect(res.text).not.toContain(basic);
  };

  it(
    `POST /start: ${RUNS} hostile bodies are refused with a 4xx and reach nothing`,
    async () => {
      await fc.assert(
        fc.asyncProperty(startBody, async (body) => {
          const text = JSON.stringify(body);
          const res = await send(`${host.url}/verification/start`, 'POST', text);
          noLeak(res);
          if (hostRefusesJson(platform, body)) {
            expect(res.status).toBe(400);
            expect(isProblem(res)).toBe(false);
          } else {
            expectProblem4xx(res);
          }
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    },
    TIMEOUT_MS,
  );

  it(
    `POST /check: ${RUNS} bad codes, forged and altered ids are refused and reach nothing`,
    async () => {
      await fc.assert(
        fc.asyncProperty(checkBody(handles), async (body) => {
          const res = await send(`${host.url}/verification/check`, 'POST', JSON.stringify(body));
          noLeak(res);
          if (hostRefusesJson(platform, body)) expect(res.status).toBe(400);
          else expectProblem4xx(res);
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      // Nothing counted against the sessions: each still has every attempt.
      for (const phone of ['+79123400001', '+79123400002', '+79123400003'])
        expect(sb.sessionsFor(phone)[0]!.attempts_remaining).toBe(3);
    },
    TIMEOUT_MS,
  );

  it(
    `GET /status/:id: ${RUNS} unknown, forged and hostile ids are not_found and reach nothing`,
    async () => {
      await fc.assert(
        fc.asyncProperty(statusId(handles), async (id) => {
          const encoded = encodeURIComponent(id);
          const res = await send(`${host.url}/verification/status/${encoded}`, 'GET');
          noLeak(res);
          // Fastify's router refuses params over 100 characters itself (its own 414).
          if (platform === 'fastify' && id.length > 100) expect(res.status).toBe(414);
          else expect(expectProblem4xx(res).error_code).toBe('not_found');
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );

  it(
    `every route: ${RUNS} hostile headers and content types never give a 5xx or reach the API`,
    async () => {
      const headerValue = fc.oneof(
        fc.string({ unit: 'binary-ascii', maxLength: 200 }).map(printable),
        fc.constantFrom('', 'null', '__proto__', '1e309', '-1', 'x'.repeat(4000)),
      );
      const request = fc.record({
        route: fc.constantFrom('start', 'check', 'status', 'methods'),
        contentType: fc.constantFrom(
          'application/json',
          'application/json; charset=utf-8',
          'application/json; charset=utf-16',
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/problem+json',
          'application/json, text/plain',
          '',
        ),
        headers: fc.dictionary(
          fc.constantFrom(
            'x-forwarded-for',
            'x-real-ip',
            'x-user',
            'authorization',
            'cookie',
            'accept',
            'x-http-method-override',
            'content-encoding',
            'transfer-encoding-x',
          ),
          headerValue,
          { maxKeys: 4 },
        ),
        body: fc.oneof(startBody, checkBody(handles)),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ route, contentType, headers, body }) => {
          const path = route === 'status' ? `/verification/status/${handles[0]}x` : `/verification/${route}`;
          const method = route === 'status' || route === 'methods' ? 'GET' : 'POST';
          const res = await send(
            `${host.url}${path}`,
            method,
            method === 'POST' ? JSON.stringify(body) : undefined,
            {
              ...headers,
              ...(contentType ? { 'content-type': contentType } : {}),
            },
          );
          noLeak(res);
          if (route === 'methods') expect([200, 400, 415]).toContain(res.status);
          else if (isProblem(res)) expectProblem4xx(res);
          else expect([400, 404, 413, 414, 415]).toContain(res.status);
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );

  it('a huge body is refused by size, and the app is still up and serving afterwards', async () => {
    const huge = JSON.stringify({ phone_number: '+79123400009', method: 'sms', pad: 'x'.repeat(300_000) });
    const res = await send(`${host.url}/verification/start`, 'POST', huge);
    expect(res.status).toBe(413);
    expect(sb.requestCount()).toBe(0);
    const ok = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123400010',
      method: 'sms',
    });
    expect(ok.status).toBe(201);
    expect((await call(host.url, 'GET', '/host/ping')).body).toEqual({ pong: true });
  });
});
