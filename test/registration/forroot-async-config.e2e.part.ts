/**
 * forRootAsync as a host writes it with @nestjs/config: the webhook route is declared statically
 * and the factory switches webhooks on or off from configuration; a test passes the sandbox's clock
 * through the same configuration. And a base URL that ends in /v1 is warned about at boot through
 * the module's logger.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigModule, ConfigService } from '@nestjs/config';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import { CapturingLogger } from '../support/log-capture.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const DAY_MS = 86_400_000;

describe.each(ONE_PLATFORM)('forRootAsync from ConfigService (%s)', (platform) => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    for (const host of hosts) await host.close();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const hosts: TestApp[] = [];

  beforeAll(async () => {
    sb = suite.sb;
    // The sandbox's clock a day ahead of real time: only a module that follows it sees that day.
    await sb.advance(DAY_MS);
  });

  /** The host's configuration, as its ConfigModule would load it (from .env in production). */
  const configuration = (webhookSecret: string | undefined) => ({
    VERIFICATION_API_URL: sb.url,
    VERIFICATION_API_KEY: sb.demoAccount.apiKey,
    VERIFICATION_API_SECRET: sb.demoAccount.apiSecret,
    VERIFICATION_WEBHOOK_SECRET: webhookSecret,
    // Tests only: configuration may hold a function, and the factory passes it on.
    VERIFICATION_CLOCK: () => sb.now(),
  });

  const boot = async (webhookSecret: string | undefined) => {
    const host = await createTestApp({
      platform,
      module: VerificationModule.forRootAsync({
        imports: [ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => configuration(webhookSecret)] })],
        inject: [ConfigService],
        webhooks: { enabled: true }, // declared at import; the factory may switch it off
        useFactory: (config: ConfigService) => {
          const secret = config.get<string>('VERIFICATION_WEBHOOK_SECRET');
          return {
            api: {
              baseUrl: config.getOrThrow<string>('VERIFICATION_API_URL'),
              apiKey: config.getOrThrow<string>('VERIFICATION_API_KEY'),
              apiSecret: config.getOrThrow<string>('VERIFICATION_API_SECRET'),
            },
            webhooks: secret ? { secret } : { enabled: false },
            clock: config.get<() => number>('VERIFICATION_CLOCK'),
          };
        },
      }),
    });
    hosts.push(host);
    return host;
  };

  it('switches the webhook route on and off from configuration, and follows the sandbox clock', async () => {
    const on = await boot(sb.demoAccount.webhookSecret);
    const off = await boot(undefined);
    const unsigned = { type: 'verification.verified', data: { request_id: 'x' } };

    const signedRoute = await call(on.url, 'POST', '/verification/webhooks', unsigned);
    expect(signedRoute.status).toBe(401);
    expect(signedRoute.body.error_code).toBe('invalid_signature');
    const switchedOff = await call(off.url, 'POST', '/verification/webhooks', unsigned);
    expect(switchedOff.status).toBe(404);
    expect(switchedOff.headers.get('content-type')).toContain('application/problem+json');
    expect(switchedOff.body.error_code).toBe('not_found');

    // The resend cooldown is measured on the module's clock: the sandbox's, a day ahead of Date.now().
    const started = await call(off.url, 'POST', '/verification/start', {
      phone_number: '+79123450701',
      method: 'sms',
    });
    expect(started.status).toBe(201);
    expect(Date.parse(started.body.resend_available_at as string)).toBe(sb.now() + 60_000);
    expect(sb.now() - Date.now()).toBeGreaterThan(DAY_MS - 60_000);
  });

  it('warns at boot, through the module logger, when api.baseUrl ends in /v1', async () => {
    const logger = new CapturingLogger();
    const host = await createTestApp({
      platform,
      module: VerificationModule.forRootAsync({
        useFactory: () => ({
          api: { baseUrl: `${sb.url}/v1`, apiKey: 'k', apiSecret: 's' },
          logger,
        }),
      }),
    });
    hosts.push(host);
    const warnings = logger.lines.filter((line) => line.startsWith('warn '));
    expect(warnings).toEqual([expect.stringContaining('"api.baseUrl" ends in /v1')]);
    expect(warnings[0]).not.toContain('"s"');
  });
});
