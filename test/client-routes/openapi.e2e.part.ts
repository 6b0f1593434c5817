import { beforeAll, describe, expect, it } from '@jest/globals';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { ROUTE_ERROR_CODES } from '../../src/http/verification.problems.js';
import { VerificationModule } from '../../src/index.js';

describe.each(PLATFORMS)('OpenAPI metadata of the client routes (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform,
      module: {
        api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
        routes: { prefix: 'phone' },
        webhooks: { secret: `whsec_${Buffer.from('openapi-webhook-secret-0123456789').toString('base64')}` },
      },
    });
  });

  it("shows the client routes, their bodies and responses in the host's Swagger document", () => {
    const document = SwaggerModule.createDocument(host.app, new DocumentBuilder().setTitle('host').build());
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/phone/start',
        '/phone/check',
        '/phone/status/{verification_id}',
        '/phone/methods',
        '/phone/switch',
        '/phone/cancel',
      ]),
    );
    // The server-to-server webhook route stays out of the frontends' document.
    expect(Object.keys(document.paths).filter((path) => path.includes('webhooks'))).toEqual([]);
    const schemas = document.components?.schemas ?? {};
    expect(Object.keys(schemas)).toEqual(
      expect.arrayContaining(['StartVerificationDto', 'CheckVerificationDto', 'StartVerificationResponse']),
    );
    const startBody = schemas.StartVerificationDto as {
      required?: string[];
      properties: Record<string, unknown>;
    };
    // `method` may be left out (it is then `auto`).
    expect(startBody.required).toEqual(['phone_number']);
    expect(Object.keys(startBody.properties)).toEqual(['phone_number', 'method', 'device', 'purpose']);
    expect(document.paths['/phone/start'].post?.responses['201']).toBeDefined();
    const startResponse = JSON.stringify(schemas.StartVerificationResponse);
    expect(startResponse).not.toMatch(/cost|request_id/);
    // The GET routes' optional query parameters, described for a frontend developer.
    const query = (path: string) =>
      (document.paths[path].get?.parameters ?? [])
        .filter((p) => 'in' in p && p.in === 'query')
        .map((p) => {
          const { name, required, description, schema } = p as {
            name: string;
            required?: boolean;
            description?: string;
            schema?: object;
          };
          return [name, required, (description ?? '').length > 20, schema];
        });
    const text = { type: 'string' };
    expect(query('/phone/status/{verification_id}')).toStrictEqual([['journey_token', false, true, text]]);
    expect(query('/phone/status/{verification_id}/events')).toStrictEqual([
      ['journey_token', false, true, text],
    ]);
    expect(query('/phone/methods')).toStrictEqual([['purpose', false, true, text]]);
  });

  it('describes every error response of every route as application/problem+json with its error codes', () => {
    const document = SwaggerModule.createDocument(host.app, new DocumentBuilder().setTitle('host').build());
    const problem = document.components?.schemas?.VerificationProblem as {
      required?: string[];
      properties: Record<string, { type?: string; description?: string; example?: unknown }>;
    };
    expect(problem.required).toStrictEqual(['type', 'title', 'status', 'detail', 'error_code']);
    // Each field's type as a generated client reads it.
    const shapes = Object.fromEntries(
      Object.entries(problem.properties).map(([name, p]) => {
        const { description: _d, example: _e, ...shape } = p;
        return [name, shape];
      }),
    );
    const text = { type: 'string' };
    expect(shapes).toStrictEqual({
      type: text,
      title: text,
      status: { type: 'integer' },
      detail: text,
      error_code: text,
      attempts_remaining: { type: 'integer' },
      verification_status: text,
      reason: text,
      available_methods: { type: 'array', items: text },
      limit: text,
      fallback_available_at: { type: 'string', format: 'date-time' },
      errors: {
        type: 'array',
        items: {
          type: 'object',
          properties: { field: { type: 'string', nullable: true }, message: text },
        },
      },
      purpose: text,
      challenge: text,
    });
    // Each field is described or shown by example; an optional one names the error codes that carry it.
    const codes = new Set(Object.values(ROUTE_ERROR_CODES).flat());
    for (const [name, p] of Object.entries(problem.properties)) {
      expect([name, `${p.description ?? ''}${String(p.example ?? '')}`.length > 0]).toStrictEqual([
        name,
        true,
      ]);
      if (problem.required!.includes(name)) continue;
      const carriers = p.description!.split(':')[0]!.split(', ');
      expect([name, carriers.every((code) => codes.has(code as never))]).toStrictEqual([name, true]);
    }

    /** status → error codes of one route's problem responses; fails if a 2xx lists problem+json. */
    const errorCodes = (path: string, method: 'get' | 'post'): Record<string, string[]> => {
      const responses = document.paths[path][method]!.responses as Record<
        string,
        {
          content?: Record<
            string,
            { schema?: { allOf?: { properties?: Record<string, { type?: string; enum?: string[] }> }[] } }
          >;
          description?: string;
        }
      >;
      const out: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(responses)) {
        const types = Object.keys(response.content ?? {});
        if (status.startsWith('2')) {
          expect({ status, types }).toEqual({ status, types: ['application/json'] });
          continue;
        }
        expect({ status, types }).toEqual({ status, types: ['application/problem+json'] });
        const schema = response.content!['application/problem+json'].schema!;
        expect(JSON.stringify(schema)).toContain('#/components/schemas/VerificationProblem');
        out[status] = schema.allOf!.flatMap((part) => part.properties?.error_code?.enum ?? []);
        // Narrowed to the status's codes, as a string, and named in the response's description.
        expect(schema.allOf![1]!.properties!.error_code).toStrictEqual({ type: 'string', enum: out[status] });
        expect(response.description).toBe(out[status]!.join(', '));
      }
      return out;
    };
    expect(errorCodes('/phone/start', 'post')).toEqual({
      '400': ['validation_error', 'purpose_not_allowed', 'method_not_available', 'phone_not_allowed'],
      '403': ['cross_site_request', 'step_up_required', 'start_refused'],
      '409': ['method_held'],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '429': ['rate_limit_exceeded', 'too_many_wrong_codes'],
      '503': ['service_unavailable'],
    });
    expect(errorCodes('/phone/check', 'post')).toEqual({
      '400': ['validation_error', 'invalid_code', 'method_not_available'],
      '403': ['cross_site_request'],
      '404': ['not_found'],
      '409': ['not_pending'],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '429': ['rate_limit_exceeded', 'too_many_wrong_codes'],
      '503': ['service_unavailable'],
    });
    expect(errorCodes('/phone/cancel', 'post')).toEqual({
      '400': ['validation_error'],
      '403': ['cross_site_request'],
      '404': ['not_found'],
      '409': ['not_pending', 'switch_in_progress'],
      '413': ['payload_too_large'],
      '415': ['unsupported_media_type'],
      '429': ['rate_limit_exceeded'],
      '503': ['service_unavailable'],
    });
    expect(errorCodes('/phone/status/{verification_id}', 'get')).toEqual({
      '404': ['not_found'],
      // Past the caller's metered reads, a lost record's rebuild is refused with Retry-After.
      '429': ['rate_limit_exceeded'],
      '503': ['service_unavailable'],
    });
    // A `purpose` that is no purpose's name, or one not accepted here, is refused as on a start.
    expect(errorCodes('/phone/methods', 'get')).toEqual({
      '400': ['validation_error', 'purpose_not_allowed'],
      '503': ['service_unavailable'],
    });
    const events = document.paths['/phone/status/{verification_id}/events'].get!.responses as Record<
      string,
      { content?: Record<string, unknown> }
    >;
    expect(Object.keys(events['200'].content ?? {})).toContain('text/event-stream');
    expect(Object.keys(events).sort()).toEqual(['200', '404', '429', '503']);
  });

  it('declares Retry-After on the answers that say how long to wait, and on no other', () => {
    const document = SwaggerModule.createDocument(host.app, new DocumentBuilder().setTitle('host').build());
    const waits = (path: string, method: 'get' | 'post') => {
      const responses = document.paths[path]![method]!.responses as Record<string, { headers?: object }>;
      return Object.entries(responses)
        .filter(([, response]) => response.headers && 'Retry-After' in response.headers)
        .map(([status]) => status)
        .sort();
    };
    expect(waits('/phone/start', 'post')).toEqual(['409', '429', '503']);
    expect(waits('/phone/check', 'post')).toEqual(['429', '503']);
    expect(waits('/phone/switch', 'post')).toEqual(['409', '429', '503']);
    expect(waits('/phone/methods', 'get')).toEqual(['503']);
    const start = document.paths['/phone/start']!.post!.responses as Record<string, { headers?: object }>;
    expect(start['429']!.headers).toEqual({
      'Retry-After': { description: expect.any(String), schema: { type: 'integer', minimum: 1 } },
    });
  });

  it("two registrations' routes have distinct operation ids; the unnamed one's stay as they were", async () => {
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    const both = await suite.boot({
      platform,
      module: { api, routes: { prefix: 'phone' } },
      imports: [VerificationModule.forRoot({ api, name: 'south', routes: { prefix: 'south/phone' } })],
    });
    const document = SwaggerModule.createDocument(both.app, new DocumentBuilder().setTitle('host').build());
    const ids = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.values(item as Record<string, { operationId?: string }>).map((op) => [path, op.operationId]),
    );
    const south = ids.filter(([path]) => path!.startsWith('/south/'));
    expect(south.length).toBeGreaterThanOrEqual(7);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
    expect(ids).toContainEqual(['/phone/start', 'VerificationController_start']);
    expect(ids).toContainEqual(['/south/phone/start', 'VerificationController_south_start']);
  });
});
