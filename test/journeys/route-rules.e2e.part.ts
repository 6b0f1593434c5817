/**
 * The switch and cancel routes are guarded as start is: the body rules (JSON only, size, fields),
 * cross-site requests (Sec-Fetch-Site / Origin), owner binding of the handle, the caller's limits,
 * and the OpenAPI document with their problem responses.
 */
import { describe, expect, it } from '@jest/globals';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { VerificationClientError } from '../../src/core/verification.errors.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { send } from '../hardening/support/responses.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  cancel,
  freshPhone,
  journeyFixture,
  journeyHost,
  OWNER,
  problem,
  start,
  status,
  switchMethod,
} from './journey-host.js';

const SHOP = 'https://shop.example';
const ROUTES = ['switch', 'cancel'] as const;

function expectProblem(
  res: { status: number; headers: Headers; text: string },
  httpStatus: number,
  code: string,
) {
  const body = JSON.parse(res.text) as Record<string, unknown>;
  expect({ status: res.status, code: body.error_code, bodyStatus: body.status }).toEqual({
    status: httpStatus,
    code,
    bodyStatus: httpStatus,
  });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
}

describe.each(PLATFORMS)('journeys: the switch and cancel routes are guarded like start (%s)', (platform) => {
  const fx = journeyFixture();

  it('JSON bodies only (415), at most routes.bodyLimit (413), only their own string fields (400); nothing moves', async () => {
    const host = await journeyHost(fx, platform, { routes: { bodyLimit: 1024 } });
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = first.body.verification_id as string;
    fx.sb.resetRequestCounts();
    for (const route of ROUTES) {
      const url = `${host.url}/verification/${route}`;
      for (const [contentType, body] of [
        ['application/x-www-form-urlencoded', `verification_id=${encodeURIComponent(id)}`],
        ['text/plain', JSON.stringify({ verification_id: id })],
      ])
        expectProblem(
          await send(url, 'POST', body, { 'content-type': contentType, 'x-user': OWNER }),
          415,
          'unsupported_media_type',
        );
      expectProblem(
        await send(url, 'POST', JSON.stringify({ verification_id: id, pad: 'x'.repeat(2000) }), {
          'x-user': OWNER,
        }),
        413,
        'payload_too_large',
      );
      for (const body of [
        {},
        { verification_id: 42 },
        { verification_id: id, code: '1234' },
        { verification_id: [id] },
        { verification_id: id, method: { auto: true } },
      ]) {
        const res = await call(host.url, 'POST', `/verification/${route}`, body, { 'x-user': OWNER });
        expect(problem(res)).toMatchObject({ status: 400, error_code: 'validation_error' });
      }
      const polluted = await send(url, 'POST', `{"verification_id":"${id}","__proto__":{"polluted":true}}`, {
        'x-user': OWNER,
      });
      expect(polluted.status).toBe(400);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(fx.sb.requestCount()).toBe(0);
    expect((await status(host, id)).body).toMatchObject({ status: 'sent', methods_tried: ['sms'] });
  });

  it('a cross-site request is 403 cross_site_request unless its origin is allowed', async () => {
    const host = await journeyHost(fx, platform, { routes: { allowedOrigins: [SHOP] } });
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = first.body.verification_id as string;
    const crossSite = { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site', 'x-user': OWNER };
    for (const route of ROUTES)
      for (const origin of ['https://evil.example', 'https://shop.example.evil', undefined])
        expectProblem(
          await send(`${host.url}/verification/${route}`, 'POST', JSON.stringify({ verification_id: id }), {
            ...crossSite,
            ...(origin ? { origin } : {}),
          }),
          403,
          'cross_site_request',
        );
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(1);
    const body = JSON.stringify({ verification_id: id });
    const moved = await send(`${host.url}/verification/switch`, 'POST', body, { ...crossSite, origin: SHOP });
    expect(moved.status).toBe(201);
    const canceled = await send(`${host.url}/verification/cancel`, 'POST', body, {
      ...crossSite,
      origin: SHOP,
    });
    expect(canceled.status).toBe(200);
  });

  it("a handle bound to another owner, forged or altered is 404 not_found, and the owner's journey is untouched", async () => {
    const host = await journeyHost(fx, platform);
    const first = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = first.body.verification_id as string;
    const altered = `${id.slice(0, -2)}${id.endsWith('AA') ? 'BB' : 'AA'}`;
    fx.sb.resetRequestCounts();
    for (const [handle, owner] of [
      [id, 'mallory'],
      [id, null],
      [altered, OWNER],
      ['v1.forged', OWNER],
    ] as const) {
      expect(problem(await switchMethod(host, handle, undefined, owner))).toMatchObject({
        status: 404,
        error_code: 'not_found',
      });
      expect(problem(await cancel(host, handle, owner))).toMatchObject({
        status: 404,
        error_code: 'not_found',
      });
    }
    expect(fx.sb.requestCount()).toBe(0);
    expect((await status(host, id)).body).toMatchObject({ status: 'sent', methods_tried: ['sms'] });
    // Once its owner has opened it (handles opened lately are remembered), it still opens for no one else.
    for (const owner of ['mallory', null])
      expect(problem(await cancel(host, id, owner))).toMatchObject({ status: 404, error_code: 'not_found' });
    expect((await switchMethod(host, id)).status).toBe(201);
  });

  it("a host calling the service itself is held to the routes' field rules: a malformed code, a method that is not a string are 400 validation_error naming the field; nothing is asked of the API", async () => {
    const host = await journeyHost(fx, platform);
    const started = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const id = String(started.body.verification_id);
    const service = host.app.get(VerificationService);
    const refusal = (answer: Promise<unknown>) =>
      answer.then(
        () => 'answered',
        (error: VerificationClientError) => ({
          status: error.getStatus(),
          code: error.errorCode,
          extra: error.extra,
        }),
      );
    fx.sb.resetRequestCounts();
    const malformed = { verificationId: id, code: '12ab', owner: OWNER };
    await expect(refusal(service.check(malformed))).resolves.toEqual({
      status: 400,
      code: 'validation_error',
      extra: { errors: [{ field: 'code', message: expect.stringMatching(/^code must be \S/) }] },
    });
    const notString = { verificationId: id, method: 42 as unknown as string, owner: OWNER };
    await expect(refusal(service.switchMethod(notString))).resolves.toEqual({
      status: 400,
      code: 'validation_error',
      extra: { errors: [{ field: 'method', message: 'method must be a string' }] },
    });
    expect(fx.sb.requestCount()).toBe(0);
    expect((await status(host, id)).body).toMatchObject({ status: 'sent', methods_tried: ['sms'] });
  });

  it("a cancel counts against the caller's check limit; a switch against its start limits", async () => {
    const host = await journeyHost(fx, platform, {
      limits: {
        checkPerIp: { points: 2, windowMs: 600_000 },
        startPerIp: { points: 2, windowMs: 3_600_000 },
        // Under grading a switch to a method charged on proof is not counted per address (see
        // graded-answers.e2e.part.ts); without it every switch is.
        pumping: { grading: false },
      },
    });
    const a = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const b = await start(host, { phone_number: freshPhone(), method: 'sms' });
    const refusedSwitch = await switchMethod(host, a.body.verification_id);
    expect(problem(refusedSwitch)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(refusedSwitch.body.reason).toBe('start_ip_limit');
    expect((await cancel(host, a.body.verification_id)).status).toBe(200);
    expect((await cancel(host, b.body.verification_id)).status).toBe(200);
    const refusedCancel = await cancel(host, b.body.verification_id);
    expect(problem(refusedCancel)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(refusedCancel.body.reason).toBe('check_limit');
  });

  it("a switch is a start of its journey's purpose: counted by the purpose's own per-number limit", async () => {
    const host = await journeyHost(fx, platform, {
      purposes: { step_up: { limits: { startPerPhone: { points: 2, windowMs: 3_600_000 } } } },
    });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'sms', purpose: 'step_up' });
    expect(first.status).toBe(201);
    expect((await switchMethod(host, first.body.verification_id)).status).toBe(201);
    const posts = fx.sb.requestCount('POST /v1/verify');
    // The third paid start of the number for step_up in the hour, whether a start or a switch.
    const refused = await switchMethod(host, first.body.verification_id);
    expect(problem(refused)).toMatchObject({ status: 429, error_code: 'rate_limit_exceeded' });
    expect(refused.body.reason).toBe('start_phone_limit');
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    expect((await status(host, first.body.verification_id)).body.methods_tried).toHaveLength(2);
    // Another purpose's start of the number is not counted by it.
    expect((await start(host, { phone_number: phone, method: 'flash_call', purpose: 'login' })).status).toBe(
      201,
    );
  });

  it('the OpenAPI document shows both routes with their bodies, answers and problem responses', async () => {
    const host = await journeyHost(fx, platform);
    const document = SwaggerModule.createDocument(host.app, new DocumentBuilder().setTitle('host').build());
    const errorCodes = (path: string): Record<string, string[]> => {
      const responses = document.paths[path].post!.responses as Record<
        string,
        {
          content?: Record<
            string,
            { schema?: { allOf?: { properties?: Record<string, { enum?: string[] }> }[] } }
          >;
        }
      >;
      const out: Record<string, string[]> = {};
      for (const [code, response] of Object.entries(responses))
        out[code] = Object.keys(response.content ?? {}).includes('application/problem+json')
          ? response.content!['application/problem+json'].schema!.allOf!.flatMap(
              (part) => part.properties?.error_code?.enum ?? [],
            )
          : Object.keys(response.content ?? {});
      return out;
    };
    expect(errorCodes('/verification/switch')).toEqual({
      '201': ['application/json'],
      '400': ['validation_error', 'method_not_available'],
      '403': ['cross_site_request', 'start_refused'],
      '404': ['not_found'],
      '409': [
        'not_pending',
        'journey_limit_reached',
        'fallback_not_available',
        'switch_in_progress',
        'method_held',
      ],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '429': ['rate_limit_exceeded', 'too_many_wrong_codes'],
      '503': ['service_unavailable'],
    });
    expect(errorCodes('/verification/cancel')).toEqual({
      '200': ['application/json'],
      '400': ['validation_error'],
      '403': ['cross_site_request'],
      '404': ['not_found'],
      '409': ['not_pending', 'switch_in_progress'],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '429': ['rate_limit_exceeded'],
      '503': ['service_unavailable'],
    });
    const schemas = document.components?.schemas as Record<
      string,
      { required?: string[]; properties: Record<string, unknown> }
    >;
    expect(schemas.SwitchVerificationDto!.required).toEqual(['verification_id']);
    expect(Object.keys(schemas.SwitchVerificationDto!.properties)).toEqual([
      'verification_id',
      'method',
      'journey_token',
    ]);
    expect(schemas.CancelVerificationDto!.required).toEqual(['verification_id']);
    expect(schemas.StartVerificationDto!.required).toEqual(['phone_number']);
    expect(Object.keys(schemas.VerificationStatusResponse!.properties)).toEqual(
      expect.arrayContaining(['methods_tried', 'switch_methods', 'fallback_available_at', 'journey_token']),
    );
    expect(schemas.VerificationStatusResponse!.required).toEqual(
      expect.arrayContaining(['methods_tried', 'switch_methods']),
    );
  });
});
