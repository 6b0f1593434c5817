import { beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { hostRefusesJson, printable } from './support/fuzz-inputs.js';
import { expectProblem4xx, isProblem, send } from './support/responses.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const TIMEOUT_MS = 120_000;
const ALLOWED_ORIGIN = 'https://shop.example';

/** A JSON value nested `depth` levels deep (arrays and objects mixed), built as text. */
function nested(depth: number, objects: boolean): string {
  return objects
    ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}${']'.repeat(depth)}`;
}

/**
 * Property-based attacks on the body routes' rules (ClientBodyGuard and the shallow body check):
 * any content type but application/json, any nesting depth under any field, any Sec-Fetch-Site
 * and Origin. Each answer is a 4xx from the module (or the host parser's own 4xx for a body it
 * cannot parse), never a 5xx, never an error log, and nothing reaches the API.
 */
describe.each(PLATFORMS)('hardening: the body routes’ rules (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;
  const logger = new CapturingLogger();

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      logger,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        clock: () => sb.now(),
        reconcile: { enabled: false },
        // Room for deep bodies, so the shallow check (not the size limit) is what refuses them.
        routes: { allowedOrigins: [ALLOWED_ORIGIN], bodyLimit: 48 * 1024 },
      },
    });
    sb.resetRequestCounts();
  });

  const noErrorLogged = (): void =>
    expect(logger.lines.filter((line) => /^(error|fatal)/.test(line))).toEqual([]);

  it(
    `${RUNS} content types other than application/json: 415 (or the parser's 4xx), nothing started`,
    async () => {
      const token = fc.stringMatching(/^[a-z][a-z0-9.+-]{0,15}$/);
      const mediaType = fc.oneof(
        fc.constantFrom(
          'application/x-www-form-urlencoded',
          'text/plain',
          'text/plain; charset=utf-8',
          'multipart/form-data; boundary=x',
          'application/problem+json',
          'application/merge-patch+json',
          'application/jsonp',
          'application/json-seq',
          'text/json',
          'application/javascript',
        ),
        fc.tuple(token, token).map(([type, subtype]) => `${type}/${subtype}`),
        fc.string({ unit: 'binary-ascii', maxLength: 60 }).map(printable),
      );
      const contentType = mediaType.filter(
        (value) => value.split(';')[0]!.trim().toLowerCase() !== 'application/json',
      );
      const body = JSON.stringify({ phone_number: '+79123401234', method: 'sms' });
      await fc.assert(
        fc.asyncProperty(contentType, fc.constantFrom('start', 'check'), async (type, route) => {
          const res = await send(`${host.url}/verification/${route}`, 'POST', body, {
            'content-type': type,
          });
          expect(res.status).toBeGreaterThanOrEqual(400);
          expect(res.status).toBeLessThan(500);
          // A type the host's parsers take (urlencoded, text, …) reaches the module: its own 415.
          if (/problem\+json/.test(res.headers.get('content-type') ?? ''))
            expect(expectProblem4xx(res).error_code).toBe('unsupported_media_type');
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
      noErrorLogged();
    },
    TIMEOUT_MS,
  );

  it(
    `${RUNS} bodies nested up to 3,000 deep under any field: a quick 400 or 413, never a 5xx`,
    async () => {
      const field = fc.oneof(
        fc.constantFrom('phone_number', 'method', 'x', 'constructor', 'toString'),
        fc.string({ minLength: 1, maxLength: 12 }).filter((key) => !/["\\]/.test(key)),
      );
      await fc.assert(
        fc.asyncProperty(
          field,
          fc.integer({ min: 1, max: 3000 }),
          fc.boolean(),
          async (key, depth, objects) => {
            const base = { phone_number: '+79123401234', method: 'sms' } as Record<string, string>;
            delete base[key];
            const text = `{${Object.entries(base)
              .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)},`)
              .join('')}${JSON.stringify(key)}:${nested(depth, objects)}}`;
            const startedAt = performance.now();
            const res = await send(`${host.url}/verification/start`, 'POST', text);
            expect(performance.now() - startedAt).toBeLessThan(1000);
            if (hostRefusesJson(platform, JSON.parse(text))) {
              // Fastify's parser refuses a `__proto__` key itself (found by this property with fast-check's
              // own `__proto__` strings): the host's 400, which the module leaves as it is.
              expect(res.status).toBe(400);
              expect(isProblem(res)).toBe(false);
            } else {
              const problem = expectProblem4xx(res);
              expect(['validation_error', 'payload_too_large']).toContain(problem.error_code);
            }
            expect(sb.requestCount()).toBe(0);
          },
        ),
        { numRuns: RUNS, endOnFailure: true },
      );
      noErrorLogged();
    },
    TIMEOUT_MS,
  );

  it(
    `${RUNS} Sec-Fetch-Site and Origin values: only a cross-site request from an unlisted origin is refused`,
    async () => {
      const site = fc.oneof(
        fc.constantFrom('cross-site', 'same-site', 'same-origin', 'none', 'Cross-Site', ''),
        fc.string({ unit: 'binary-ascii', maxLength: 20 }).map(printable),
      );
      const origin = fc.option(
        fc.oneof(
          fc.constantFrom(ALLOWED_ORIGIN, 'https://evil.example', 'null', `${ALLOWED_ORIGIN}.evil`),
          fc.webUrl().map((url) => new URL(url).origin),
        ),
        { nil: undefined },
      );
      // An invalid phone: a request that passes the rules is refused by validation, so nothing is ever started.
      const body = JSON.stringify({ phone_number: 'not a phone', method: 'sms' });
      await fc.assert(
        fc.asyncProperty(site, origin, async (secFetchSite, from) => {
          const res = await send(`${host.url}/verification/start`, 'POST', body, {
            'sec-fetch-site': secFetchSite,
            ...(from === undefined ? {} : { origin: from }),
          });
          const refused = secFetchSite === 'cross-site' && from !== ALLOWED_ORIGIN;
          expect(expectProblem4xx(res).error_code).toBe(refused ? 'cross_site_request' : 'validation_error');
          expect(sb.requestCount()).toBe(0);
        }),
        { numRuns: RUNS, endOnFailure: true },
      );
    },
    TIMEOUT_MS,
  );
});
