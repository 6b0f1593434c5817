import { beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  Catch,
  Controller,
  ForbiddenException,
  Get,
  Injectable,
  Param,
  Post,
  UnauthorizedException,
  UseFilters,
  ValidationPipe,
  type ArgumentsHost,
  type CanActivate,
  type ExceptionFilter,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE, HttpAdapterHost } from '@nestjs/core';
import {
  MemoryStore,
  VerificationClientError,
  VerificationError,
  VerificationProblemFilter,
  VerificationService,
  VerificationStoreUnavailableError,
} from '../../src/index.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** A host's auth guard, global: `x-deny: unauthorized|forbidden` refuses, anything else passes. */
@Injectable()
class HostAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const deny = context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers['x-deny'];
    if (deny === 'unauthorized') throw new UnauthorizedException();
    if (deny === 'forbidden') throw new ForbiddenException('No access for you');
    return true;
  }
}

/** A host's own guard that opens its session with a cookie on every request, before the route runs. */
@Injectable()
class HostSessionCookieGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const response = context.switchToHttp().getResponse<{
      cookie?: (name: string, value: string) => unknown;
      header: (name: string, value: string) => unknown;
    }>();
    // Express's res.cookie, Fastify's reply.header (no cookie plugin).
    if (typeof response.cookie === 'function') response.cookie('host_session', 'h1');
    else response.header('set-cookie', 'host_session=h1; Path=/');
    return true;
  }
}

/** A host's own global filter for its 403s: it must see them on every route, the module's too. */
@Catch(ForbiddenException)
class HostForbiddenFilter implements ExceptionFilter {
  constructor(private readonly adapterHost: HttpAdapterHost) {}
  catch(exception: ForbiddenException, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse();
    this.adapterHost.httpAdapter.reply(response, { host_filter: true, message: exception.message }, 403);
  }
}

/** A store whose reads fail on demand, as a store that went away. */
class FlakyStore extends MemoryStore {
  down = false;
  override async get(key: string): Promise<string | null> {
    if (this.down) throw new VerificationStoreUnavailableError('get', 'connection lost');
    return super.get(key);
  }
}

/** A host's own routes calling VerificationService (the README's recipe), one of them with the package's filter. */
@Controller('signup')
class HostSignupController {
  constructor(private readonly verification: VerificationService) {}

  @Post('phone')
  async start(@Body() body: { phone: string }): Promise<unknown> {
    return this.verification.start({ phoneNumber: body.phone, method: 'sms' });
  }

  @Get('phone/:id')
  async status(@Param('id') id: string): Promise<unknown> {
    return this.verification.status(id);
  }
}

@Controller('signup-problems')
@UseFilters(VerificationProblemFilter)
class HostProblemController {
  constructor(private readonly verification: VerificationService) {}

  @Post('phone')
  async start(@Body() body: { phone: string }): Promise<unknown> {
    return this.verification.start({ phoneNumber: body.phone, method: 'sms' });
  }
}

describe('the package error classes', () => {
  it('a client error is an HttpException whose response is its problem document', () => {
    const error = new VerificationClientError('not_pending', 'The verification is expired', {
      verification_status: 'expired',
      status: 'expired',
    });
    expect(error).toBeInstanceOf(VerificationError);
    expect(error.getStatus()).toBe(409);
    expect(error.getResponse()).toEqual({
      type: 'urn:nestjs-phone-verification:error:not_pending',
      title: 'Verification is not pending',
      status: 409,
      detail: 'The verification is expired',
      error_code: 'not_pending',
      verification_status: 'expired',
    });
  });
});

describe.each(PLATFORMS)('the host boundary of the client routes (%s)', (platform) => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let guarded: TestApp;
  let ownRoutes: TestApp;
  const store = new FlakyStore();

  beforeAll(async () => {
    sb = suite.sb;
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    guarded = await suite.boot({
      platform,
      module: { api, clock: () => sb.now(), limits: { enabled: false }, reconcile: { enabled: false } },
      providers: [
        { provide: APP_GUARD, useClass: HostAuthGuard },
        { provide: APP_FILTER, useClass: HostForbiddenFilter },
      ],
    });
    ownRoutes = await suite.boot({
      platform,
      module: {
        api,
        clock: () => sb.now(),
        limits: { enabled: false },
        reconcile: { enabled: false },
        routes: { enabled: false },
        store,
      },
      controllers: [HostSignupController, HostProblemController],
    });
  });

  it("a host guard's 401 on a module route keeps its status and body (no validation_error)", async () => {
    const res = await call(guarded.url, 'GET', '/verification/methods', undefined, {
      'x-deny': 'unauthorized',
    });
    expect(res.status).toBe(401);
    expect(res.headers.get('content-type')).not.toMatch(/problem/);
    expect(res.body).toEqual({ statusCode: 401, message: 'Unauthorized' });
    const start = await call(
      guarded.url,
      'POST',
      '/verification/start',
      { phone_number: '+79123450101', method: 'sms' },
      { 'x-deny': 'unauthorized' },
    );
    expect(start.status).toBe(401);
    expect(sb.sessionsFor('+79123450101')).toHaveLength(0);
  });

  it("a host guard's 403 reaches the host's own global filter, on the module's routes as on its own", async () => {
    for (const path of ['/verification/methods', '/verification/status/anything', '/host/ping']) {
      const res = await call(guarded.url, 'GET', path, undefined, { 'x-deny': 'forbidden' });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 403,
        body: { host_filter: true, message: 'No access for you' },
      });
    }
    // The module's own refusals stay problem documents next to the host's global filter.
    const res = await call(guarded.url, 'GET', '/verification/status/nope');
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 404, error_code: 'not_found' });
  });

  it("a cookie the host's guard set before a start is kept beside the module's browser key cookie", async () => {
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    const host = await suite.boot({
      platform,
      trustProxy: true,
      // Protection on, no owner: the start issues a browser key.
      module: { api, clock: () => sb.now(), reconcile: { enabled: false } },
      providers: [{ provide: APP_GUARD, useClass: HostSessionCookieGuard }],
    });
    const res = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: '+79123450104', method: 'sms' },
      { 'x-forwarded-for': '203.0.113.20' },
    );
    expect(res.status).toBe(201);
    const cookies = res.headers.getSetCookie().map((c) => c.split(';')[0]!);
    expect(cookies.map((c) => c.split('=')[0]).sort()).toEqual(['host_session', 'pv_browser']);
    expect(cookies).toContain('host_session=h1');
  });

  it("a host's own route calling VerificationService with bad input answers 400 with the problem, not 500", async () => {
    const res = await call(ownRoutes.url, 'POST', '/signup/phone', { phone: '12ab' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, error_code: 'validation_error' });
    const missing = await call(ownRoutes.url, 'GET', '/signup/phone/forged-handle');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ status: 404, error_code: 'not_found' });
  });

  it('with VerificationProblemFilter on its controller, a host route answers application/problem+json', async () => {
    const res = await call(ownRoutes.url, 'POST', '/signup-problems/phone', { phone: '12ab' });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 400, error_code: 'validation_error' });
  });

  it("a failure inside the module (store down, upstream garbage) reaches a host's route as a 503 problem, never a 500", async () => {
    const started = await call(ownRoutes.url, 'POST', '/signup/phone', { phone: '+79123450102' });
    expect(started.status).toBe(201);
    store.down = true;
    try {
      const res = await call(ownRoutes.url, 'GET', `/signup/phone/${String(started.body.verificationId)}`);
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({ status: 503, error_code: 'service_unavailable' });
      expect(res.text).not.toMatch(/connection lost|VerificationStore/);
    } finally {
      store.down = false;
    }
    sb.addFault({ route: 'POST /v1/verify', count: 1, kind: 'garbage' });
    const garbage = await call(ownRoutes.url, 'POST', '/signup/phone', { phone: '+79123450103' });
    sb.clearFaults();
    expect(garbage.status).toBe(503);
    expect(garbage.body).toMatchObject({ status: 503, error_code: 'service_unavailable' });
  });

  // Most hosts register Nest's ValidationPipe globally; it runs before the module's own pipe, on every route.
  it.each([
    ['APP_PIPE, default options', { providers: [{ provide: APP_PIPE, useValue: new ValidationPipe() }] }],
    [
      'useGlobalPipes, whitelist, forbidNonWhitelisted and transform',
      {
        parsers: (app: { useGlobalPipes: (pipe: ValidationPipe) => unknown }) =>
          app.useGlobalPipes(
            new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }),
          ),
      },
    ],
  ])("a host's global ValidationPipe (%s) leaves the module's bodies to the module", async (_, shape) => {
    const api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
    const host = await suite.boot({
      platform,
      module: { api, clock: () => sb.now(), limits: { enabled: false }, reconcile: { enabled: false } },
      ...shape,
    });
    const bad: [string, Record<string, unknown>, string | null][] = [
      ['/verification/start', { phone_number: '+79123450105', method: 'sms', extra: '1' }, 'extra'],
      ['/verification/start', { method: 'sms' }, 'phone_number'],
      ['/verification/check', { verification_id: 'abc', code: '12' }, 'code'],
      ['/verification/switch', { verification_id: 5 }, 'verification_id'],
      ['/verification/cancel', { verification_id: 'abc', extra: '1' }, 'extra'],
    ];
    for (const [path, body, field] of bad) {
      const res = await call(host.url, 'POST', path, body);
      expect({ path, status: res.status, type: res.headers.get('content-type') }).toEqual({
        path,
        status: 400,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
      expect(res.body).toMatchObject({ status: 400, error_code: 'validation_error' });
      expect((res.body.errors as { field: string | null }[])[0]?.field).toBe(field);
    }
    expect(sb.sessionsFor('+79123450105')).toHaveLength(0);
    // A good body passes both pipes, the host's transform leaving it as sent.
    const start = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123450106',
      method: 'sms',
    });
    expect(start.status).toBe(201);
    expect(start.body).toMatchObject({ method: 'sms', status: 'sent' });
    const [session] = sb.sessionsFor('+79123450106');
    await sb.deliver(session!.request_id);
    const check = await call(host.url, 'POST', '/verification/check', {
      verification_id: start.body.verification_id,
      code: session!.code!,
    });
    expect(check.body).toMatchObject({ status: 'verified', verified: true });
  });
});
