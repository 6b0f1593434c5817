import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationModuleOptions } from '../../src/index.js';
// The resolver is internal (not a package export): this suite checks its rules for the route options.
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { send } from '../hardening/support/responses.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const SHOP = 'https://shop.example';

/** What each of the body rules' refusals says (the problem's `detail`). */
const DETAILS: Record<string, string> = {
  cross_site_request: 'Requests from another site are not accepted on this route',
  unsupported_media_type: 'The request body must be application/json',
};

function expectProblem(
  res: { status: number; headers: Headers; text: string },
  status: number,
  code: string,
): void {
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect({ status: res.status, code: body.error_code, bodyStatus: body.status }).toEqual({
    status,
    code,
    bodyStatus: status,
  });
  if (code in DETAILS) expect(body.detail).toBe(DETAILS[code]);
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

/** A start body with an unknown field nested `depth` arrays deep (2 bytes a level). */
function deepBody(depth: number): string {
  return `{"phone_number":"+79123450500","method":"sms","x":${'['.repeat(depth)}${']'.repeat(depth)}}`;
}

describe('routes.allowedOrigins and routes.bodyLimit are validated at boot', () => {
  const api = { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' };
  const resolve = (routes: unknown) =>
    resolveVerificationOptions({ api, routes } as VerificationModuleOptions).routes;

  it('defaults: no cross-site origin, 4 KiB bodies', () => {
    expect(resolve(undefined)).toMatchObject({ allowedOrigins: [], bodyLimit: 4096 });
  });

  it('keeps origins as browsers send them, and names the bad field', () => {
    expect(
      resolve({ allowedOrigins: ['https://Shop.Example', 'http://localhost:5173/'] }).allowedOrigins,
    ).toEqual(['https://shop.example', 'http://localhost:5173']);
    expect(() => resolve({ allowedOrigins: 'https://shop.example' })).toThrow('"routes.allowedOrigins"');
    expect(() => resolve({ allowedOrigins: ['https://shop.example/app'] })).toThrow(
      '"routes.allowedOrigins[0]"',
    );
    expect(() => resolve({ allowedOrigins: [SHOP, '*'] })).toThrow('"routes.allowedOrigins[1]"');
    expect(() => resolve({ bodyLimit: 0 })).toThrow('"routes.bodyLimit"');
  });
});

describe.each(PLATFORMS)('the body routes accept only same-site application/json bodies (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;
  let shop: TestApp;
  let roomy: TestApp;
  const logger = new CapturingLogger();
  let phoneSeq = 600;
  const nextPhone = () => `+791234${String(phoneSeq++).padStart(5, '0')}`;

  beforeAll(async () => {
    sb = suite.sb;
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    // Protection on, with its defaults (10 starts per IP an hour): a refusal must count nothing.
    host = await suite.boot({
      platform,
      module: { api, clock: () => sb.now(), reconcile: { enabled: false } },
      // Fastify's own default limit (1 MiB), so a 1 MB body reaches the module.
      bodyLimit: 1024 * 1024,
    });
    shop = await suite.boot({
      platform,
      module: {
        api,
        clock: () => sb.now(),
        reconcile: { enabled: false },
        limits: { enabled: false },
        routes: { allowedOrigins: [SHOP] },
      },
      // A host that keeps no raw body (Nest's default): only the declared length tells a body's size.
      rawBody: false,
    });
    roomy = await suite.boot({
      platform,
      logger,
      module: {
        api,
        clock: () => sb.now(),
        reconcile: { enabled: false },
        limits: { enabled: false },
        routes: { bodyLimit: 64 * 1024 },
      },
    });
  });

  it('form-encoded, multipart and text bodies are 415 unsupported_media_type and start nothing', async () => {
    sb.resetRequestCounts();
    const phone = nextPhone();
    const bodies: [string, string][] = [
      ['application/x-www-form-urlencoded', `phone_number=${encodeURIComponent(phone)}&method=sms`],
      ['text/plain', JSON.stringify({ phone_number: phone, method: 'sms' })],
      [
        'multipart/form-data; boundary=X',
        `--X\r\nContent-Disposition: form-data; name="phone_number"\r\n\r\n${phone}\r\n--X--\r\n`,
      ],
    ];
    for (const [contentType, body] of bodies) {
      for (const route of ['start', 'check']) {
        const res = await send(`${host.url}/verification/${route}`, 'POST', body, {
          'content-type': contentType,
        });
        if (platform === 'fastify' && contentType.startsWith('multipart'))
          // Fastify has no multipart parser: it refuses the type itself, before any route runs.
          expect(res.status).toBe(415);
        else expectProblem(res, 415, 'unsupported_media_type');
      }
    }
    // A body with no content type at all (bytes: fetch names no type for them) is refused alike.
    const untyped = await fetch(`${host.url}/verification/start`, {
      method: 'POST',
      body: new TextEncoder().encode(JSON.stringify({ phone_number: phone, method: 'sms' })),
    });
    if (platform === 'fastify')
      // Fastify refuses a body without a type itself, before any route runs.
      expect(untyped.status).toBe(415);
    else
      expectProblem(
        { status: untyped.status, headers: untyped.headers, text: await untyped.text() },
        415,
        'unsupported_media_type',
      );
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
    const json = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' });
    expect(json.status).toBe(201);
    const charset = await send(
      `${host.url}/verification/start`,
      'POST',
      JSON.stringify({ phone_number: nextPhone(), method: 'sms' }),
      { 'content-type': 'Application/JSON; charset=utf-8' },
    );
    expect(charset.status).toBe(201);
    // Whitespace before the parameters is allowed (RFC 9110's OWS).
    const spaced = await send(
      `${host.url}/verification/start`,
      'POST',
      JSON.stringify({ phone_number: nextPhone(), method: 'sms' }),
      { 'content-type': 'application/json ; charset=utf-8' },
    );
    expect(spaced.status).toBe(201);
  });

  it('a cross-site request is 403 cross_site_request and counts against no limit', async () => {
    sb.resetRequestCounts();
    const ip = {
      'content-type': 'application/json',
      'sec-fetch-site': 'cross-site',
      origin: 'https://evil.example',
    };
    // More than the per-IP start limit (10): had the refusals been counted, the last start would be a 429.
    for (let i = 0; i < 12; i++) {
      const res = await send(
        `${host.url}/verification/start`,
        'POST',
        JSON.stringify({ phone_number: nextPhone(), method: 'sms' }),
        ip,
      );
      expectProblem(res, 403, 'cross_site_request');
    }
    const check = await send(
      `${host.url}/verification/check`,
      'POST',
      JSON.stringify({ verification_id: 'x', code: '1234' }),
      ip,
    );
    expectProblem(check, 403, 'cross_site_request');
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
    for (const site of ['same-origin', 'same-site', 'none']) {
      const res = await send(
        `${host.url}/verification/start`,
        'POST',
        JSON.stringify({ phone_number: nextPhone(), method: 'sms' }),
        { ...ip, 'sec-fetch-site': site },
      );
      expect({ site, status: res.status }).toEqual({ site, status: 201 });
    }
  });

  it('a cross-site request from an allowed origin passes; from any other origin it does not', async () => {
    const headers = { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' };
    const body = () => JSON.stringify({ phone_number: nextPhone(), method: 'sms' });
    const allowed = await send(`${shop.url}/verification/start`, 'POST', body(), {
      ...headers,
      origin: SHOP,
    });
    expect(allowed.status).toBe(201);
    for (const origin of ['https://shop.example.evil', 'http://shop.example', 'null']) {
      const res = await send(`${shop.url}/verification/start`, 'POST', body(), { ...headers, origin });
      expectProblem(res, 403, 'cross_site_request');
    }
    const noOrigin = await send(`${shop.url}/verification/start`, 'POST', body(), headers);
    expectProblem(noOrigin, 403, 'cross_site_request');
  });

  it('a body over the limit is 413 payload_too_large in milliseconds, before any validation', async () => {
    sb.resetRequestCounts();
    const padded = (size: number) =>
      JSON.stringify({ phone_number: nextPhone(), method: 'sms', pad: 'x'.repeat(size) });
    expectProblem(
      await send(`${host.url}/verification/start`, 'POST', padded(5_000)),
      413,
      'payload_too_large',
    );
    const startedAt = performance.now();
    const huge = await send(`${host.url}/verification/start`, 'POST', padded(1_000_000));
    const elapsedMs = performance.now() - startedAt;
    expect(huge.status).toBe(413);
    // Fastify (1 MiB limit) lets it through to the module's guard; Express' parser (100 KiB) refuses it first.
    if (platform === 'fastify') expectProblem(huge, 413, 'payload_too_large');
    // A bound against work out of proportion to the body (a parse or walk of the whole megabyte
    // takes seconds), not a speed figure: sending 1 MB over loopback beside other suites took
    // 470 ms on Node 22.
    expect(elapsedMs).toBeLessThan(2000);
    expect(sb.requestCount('POST /v1/verify')).toBe(0);
  });

  it('on a host that keeps no raw body, a body declared over the limit is still 413', async () => {
    const body = JSON.stringify({ phone_number: nextPhone(), method: 'sms', pad: 'x'.repeat(5_000) });
    expectProblem(await send(`${shop.url}/verification/start`, 'POST', body), 413, 'payload_too_large');
  });

  it('a JSON body that is not an object is a 400 validation_error naming no field', async () => {
    // Express's parser refuses a top-level null, string, number or boolean itself; Fastify's hands them on.
    const scalars = platform === 'fastify' ? ['null', '"+79123450500"', '1', 'true'] : [];
    for (const body of ['[]', '["phone_number"]', ...scalars]) {
      const res = await send(`${shop.url}/verification/start`, 'POST', body);
      expectProblem(res, 400, 'validation_error');
      const message = 'The request body must be a JSON object';
      expect({ body, problem: JSON.parse(res.text) }).toMatchObject({
        body,
        problem: { detail: message, errors: [{ field: null, message }] },
      });
    }
  });

  it('a body of exactly routes.bodyLimit bytes is read; one byte more is 413, declared or chunked', async () => {
    // The default limit, 4096 bytes: an unknown field pads the body, so a body that is read is a 400.
    const sized = (bytes: number) => {
      const body = JSON.stringify({ phone_number: nextPhone(), method: 'sms', pad: '' });
      return body.replace('"pad":""', `"pad":"${'x'.repeat(bytes - body.length)}"`);
    };
    expect(Buffer.byteLength(sized(4096))).toBe(4096);
    expectProblem(await send(`${host.url}/verification/start`, 'POST', sized(4096)), 400, 'validation_error');
    const over = await send(`${host.url}/verification/start`, 'POST', sized(4097));
    expectProblem(over, 413, 'payload_too_large');
    expect(JSON.parse(over.text).detail).toBe('The request body must be at most 4096 bytes');
    // Without a Content-Length (chunked), the body read is measured.
    const chunked = (body: string) =>
      fetch(`${host.url}/verification/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: new Blob([body]).stream(),
        duplex: 'half',
      } as RequestInit).then(async (res) => ({
        status: res.status,
        headers: res.headers,
        text: await res.text(),
      }));
    expectProblem(await chunked(sized(4096)), 400, 'validation_error');
    expectProblem(await chunked(sized(4097)), 413, 'payload_too_large');
  });

  it('an unknown field nested 2,000 deep is a 400 validation_error at once, with no error logged', async () => {
    logger.lines.length = 0;
    const body = deepBody(2000);
    expect(body.length).toBeLessThan(64 * 1024);
    const startedAt = performance.now();
    const res = await send(`${roomy.url}/verification/start`, 'POST', body);
    // As above: out of proportion (a recursive walk 2,000 deep), not a speed figure.
    expect(performance.now() - startedAt).toBeLessThan(2000);
    expectProblem(res, 400, 'validation_error');
    expect(JSON.parse(res.text)).toMatchObject({
      errors: [{ field: 'x', message: 'property x should not exist' }],
    });
    // A non-string value of a known field is refused the same way, before any deep walk.
    const nested = await send(
      `${roomy.url}/verification/start`,
      'POST',
      `{"phone_number":${'['.repeat(2000)}${']'.repeat(2000)},"method":"sms"}`,
    );
    expectProblem(nested, 400, 'validation_error');
    expect(logger.lines.filter((line) => /^(error|fatal)/.test(line))).toEqual([]);
  });
});
