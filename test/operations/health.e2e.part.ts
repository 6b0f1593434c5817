import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { Controller, Get, Module } from '@nestjs/common';
import { HealthCheck, HealthCheckService, HealthIndicatorService, TerminusModule } from '@nestjs/terminus';
import { VerificationHealthIndicator } from '../../src/account/verification-health.indicator.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { bootHost } from './support/ops-host.js';

/** The host's own health route, as the terminus docs build it. */
@Controller('health')
class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly verification: VerificationHealthIndicator,
  ) {}

  @Get()
  @HealthCheck()
  check() {
    return this.health.check([() => this.verification.isHealthy('verification')]);
  }

  @Get('lenient')
  @HealthCheck()
  lenient() {
    return this.health.check([() => this.verification.isHealthy('verification', { lowBalance: 'degraded' })]);
  }

  @Get('own-threshold')
  @HealthCheck()
  ownThreshold() {
    return this.health.check([() => this.verification.isHealthy('verification', { threshold: 10 })]);
  }

  @Get('any-balance')
  @HealthCheck()
  anyBalance() {
    return this.health.check([() => this.verification.isHealthy('verification', { threshold: 0 })]);
  }

  @Get('quick')
  @HealthCheck()
  quick() {
    return this.health.check([() => this.verification.isHealthy('phone', { timeoutMs: 100, threshold: 10 })]);
  }
}

@Module({ imports: [TerminusModule], controllers: [HealthController] })
class HealthModule {}

describe.each(ONE_PLATFORM)('health indicator with @nestjs/terminus (%s)', (platform) => {
  let sb: VerificationSandbox | undefined;
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    await sb?.close();
    host = sb = undefined;
    jest.restoreAllMocks();
  });

  async function boot(apiSecret?: string, baseUrl?: string) {
    sb = await VerificationSandbox.start({ port: 0 });
    const api = {
      baseUrl: baseUrl ?? sb.url,
      apiKey: sb.demoAccount.apiKey,
      apiSecret: apiSecret ?? sb.demoAccount.apiSecret,
      maxRetries: 0,
    };
    host = await bootHost({
      sb,
      platform,
      module: { api, balanceWatch: { intervalMs: 3_600_000, threshold: 100 } },
      imports: [HealthModule],
    });
    return { sb, host };
  }

  it('is up with the balance and the threshold, built by the host’s HealthIndicatorService', async () => {
    const built = jest.spyOn(HealthIndicatorService.prototype, 'check');
    const { host } = await boot();
    const res = await call(host.url, 'GET', '/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'ok',
      info: { verification: { status: 'up', balance: 1000, currency: 'RUB', threshold: 100 } },
      error: {},
      details: { verification: { status: 'up', balance: 1000, currency: 'RUB', threshold: 100 } },
    });
    expect(built).toHaveBeenCalledWith('verification');
  });

  it('is down below the threshold, with the reason (and the watch hears of the crossing)', async () => {
    const { sb, host } = await boot();
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 50 });
    const res = await call(host.url, 'GET', '/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      status: 'error',
      error: {
        verification: {
          status: 'down',
          reason: 'balance_below_threshold',
          message: 'The prepaid balance is below 100 RUB',
          balance: 50,
          threshold: 100,
        },
      },
    });
    expect(host.opsEvents.filter((e) => e.name === 'verification.balance_low')).toHaveLength(1);
    const lenient = await call(host.url, 'GET', '/health/lenient');
    expect(lenient.status).toBe(200);
    expect(lenient.body).toMatchObject({
      status: 'degraded',
      details: { verification: { status: 'degraded', reason: 'balance_below_threshold' } },
    });
  });

  it('on a terminus without `degraded` (11), a low balance asked to be degraded is reported down, with its reason', async () => {
    const check = HealthIndicatorService.prototype.check;
    jest.spyOn(HealthIndicatorService.prototype, 'check').mockImplementation(function (
      this: HealthIndicatorService,
      key,
    ) {
      const session = check.call(this, key);
      return { up: session.up.bind(session), down: session.down.bind(session) } as ReturnType<typeof check>;
    });
    const { sb, host } = await boot();
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 50 });
    const lenient = await call(host.url, 'GET', '/health/lenient');
    expect(lenient.status).toBe(503);
    expect(lenient.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'balance_below_threshold', balance: 50 } },
    });
  });

  it('is down when the balance is exhausted, even where a low balance is only degraded', async () => {
    const { sb, host } = await boot();
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    const res = await call(host.url, 'GET', '/health/lenient');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: {
        verification: {
          status: 'down',
          reason: 'balance_exhausted',
          message: 'The prepaid balance is exhausted: every start is refused (402)',
          balance: 0,
        },
      },
    });
  });

  it('is down when the API cannot be reached, or does not answer in time', async () => {
    const { sb, host } = await boot();
    sb.addFault({ route: 'GET /v1/balance', kind: 'reset', count: 0 });
    const reset = await call(host.url, 'GET', '/health');
    expect(reset.status).toBe(503);
    expect(reset.body).toMatchObject({
      error: {
        verification: {
          status: 'down',
          reason: 'api_unreachable',
          message: 'The verification API gave no usable answer (network)',
        },
      },
    });
    sb.clearFaults();
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 500, count: 1 });
    const failing = await call(host.url, 'GET', '/health');
    expect(failing.body).toMatchObject({
      error: {
        verification: {
          status: 'down',
          reason: 'api_error',
          message: 'The verification API answered HTTP 500',
          upstream_status: 500,
        },
      },
    });
    sb.addFault({ route: 'GET /v1/balance', kind: 'html', status: 502, count: 1 });
    const gateway = await call(host.url, 'GET', '/health');
    expect(gateway.status).toBe(503);
    expect(gateway.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'api_error', upstream_status: 502 } },
    });
    sb.addFault({ route: 'GET /v1/balance', kind: 'latency', latency_ms: 1000, count: 1 });
    const slow = await call(host.url, 'GET', '/health/quick');
    expect(slow.status).toBe(503);
    expect(slow.body).toMatchObject({ error: { phone: { status: 'down', reason: 'api_timeout' } } });
    // The slow read is still in flight: the next check shares it and is up once it answers.
    expect((await call(host.url, 'GET', '/health')).status).toBe(200);
  });

  it('is up at a balance equal to the threshold and down a kopeck below; a check’s own threshold (10, or an explicit 0) wins over the watch’s', async () => {
    const { sb, host } = await boot();
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 100 });
    const atBound = await call(host.url, 'GET', '/health');
    expect(atBound.status).toBe(200);
    expect(atBound.body).toMatchObject({
      details: { verification: { status: 'up', balance: 100, threshold: 100 } },
    });
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 99.99 });
    const below = await call(host.url, 'GET', '/health');
    expect(below.status).toBe(503);
    expect(below.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'balance_below_threshold', balance: 99.99 } },
    });
    // The watch's threshold is 100; this check asks for 10 only.
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 50 });
    const own = await call(host.url, 'GET', '/health/own-threshold');
    expect(own.status).toBe(200);
    expect(own.body).toMatchObject({
      details: { verification: { status: 'up', balance: 50, threshold: 10 } },
    });
    // An explicit 0 is a threshold too (any balance above zero), not the absence of one: it wins the same way.
    const anyBalance = await call(host.url, 'GET', '/health/any-balance');
    expect(anyBalance.status).toBe(200);
    expect(anyBalance.body).toMatchObject({
      details: { verification: { status: 'up', balance: 50, threshold: 0 } },
    });
  });

  describe.each([
    ['a bodiless 403 (the account disabled)', 'bodiless'],
    ['a 403 with a problem document (a gateway in front of the API)', 'problem'],
  ] as const)('a refused account: %s', (_name, shape) => {
    let stub: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((done) => (stub ? stub.close(() => done()) : done()));
      stub = undefined;
    });

    it('is down as api_rejected with upstream_status 403', async () => {
      let baseUrl: string | undefined;
      if (shape === 'problem') {
        stub = createServer((_req, res) => {
          const body = JSON.stringify({
            type: 'about:blank',
            title: 'Forbidden',
            status: 403,
            detail: 'This account may not use the API.',
            error_code: 'forbidden',
          });
          res.writeHead(403, {
            'content-type': 'application/problem+json',
            'content-length': Buffer.byteLength(body),
          });
          res.end(body);
        });
        await new Promise<void>((done) => stub!.listen(0, '127.0.0.1', done));
        baseUrl = `http://127.0.0.1:${(stub.address() as AddressInfo).port}`;
      }
      const { sb, host } = await boot(undefined, baseUrl);
      if (shape === 'bodiless') await sb.updateAccount(sb.demoAccount.apiKey, { disabled: true });
      const res = await call(host.url, 'GET', '/health');
      expect(res.status).toBe(503);
      expect(res.body).toMatchObject({
        error: {
          verification: {
            status: 'down',
            reason: 'api_rejected',
            message: expect.stringContaining('HTTP 403'),
            upstream_status: 403,
          },
        },
      });
    });
  });

  it('is down when the API refuses the credentials, and never shows them', async () => {
    const wrongSecret = 'sk_wrong_0123456789abcdef0123456789';
    const { host } = await boot(wrongSecret);
    const res = await call(host.url, 'GET', '/health');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'api_rejected', upstream_status: 401 } },
    });
    expect(res.text).not.toContain(wrongSecret);
    expect(res.text).not.toContain('Basic');
  });
});

describe('health indicator with terminus installed but TerminusModule not imported', () => {
  it('still answers terminus’ result shape', async () => {
    const sb = await VerificationSandbox.start({ port: 0 });
    const host = await bootHost({ sb });
    try {
      const indicator = host.app.get(VerificationHealthIndicator);
      expect(await indicator.isHealthy()).toEqual({
        verification: { status: 'up', balance: 1000, currency: 'RUB', threshold: 0 },
      });
      await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
      expect(await indicator.isHealthy('api')).toMatchObject({
        api: { status: 'down', reason: 'balance_exhausted' },
      });
    } finally {
      await host.close();
      await sb.close();
    }
  });
});
