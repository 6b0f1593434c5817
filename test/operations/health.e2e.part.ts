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

  async function boot(apiSecret?: string) {
    sb = await VerificationSandbox.start({ port: 0 });
    const api = {
      baseUrl: sb.url,
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

  it('is down when the balance is exhausted, even where a low balance is only degraded', async () => {
    const { sb, host } = await boot();
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 0 });
    const res = await call(host.url, 'GET', '/health/lenient');
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'balance_exhausted', balance: 0 } },
    });
  });

  it('is down when the API cannot be reached, or does not answer in time', async () => {
    const { sb, host } = await boot();
    sb.addFault({ route: 'GET /v1/balance', kind: 'reset', count: 0 });
    const reset = await call(host.url, 'GET', '/health');
    expect(reset.status).toBe(503);
    expect(reset.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'api_unreachable' } },
    });
    sb.clearFaults();
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 500, count: 1 });
    const failing = await call(host.url, 'GET', '/health');
    expect(failing.body).toMatchObject({
      error: { verification: { status: 'down', reason: 'api_error', upstream_status: 500 } },
    });
    sb.addFault({ route: 'GET /v1/balance', kind: 'latency', latency_ms: 1000, count: 1 });
    const slow = await call(host.url, 'GET', '/health/quick');
    expect(slow.status).toBe(503);
    expect(slow.body).toMatchObject({ error: { phone: { status: 'down', reason: 'api_timeout' } } });
    // The slow read is still in flight: the next check shares it and is up once it answers.
    expect((await call(host.url, 'GET', '/health')).status).toBe(200);
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
