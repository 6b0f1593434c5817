import type { DynamicModule, LoggerService, Type } from '@nestjs/common';
import { VerificationModule } from '../../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../../src/options/verification.options.js';
import type { VerificationSandbox } from '../../../src/testing/index.js';
import { createTestApp, type Platform, type TestApp } from '../../support/verification-app.js';

/** Module options linked to the sandbox (its URL, demo credentials and clock), protection off unless given. */
export function sandboxOptions(
  sb: VerificationSandbox,
  overrides: Partial<VerificationModuleOptions> = {},
): VerificationModuleOptions {
  return {
    api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
    clock: () => sb.now(),
    limits: { enabled: false },
    ...overrides,
  };
}

/**
 * A host app with the module registered globally, so that the host's own modules in `imports`
 * (a health or metrics controller) can inject what the module exports.
 */
export function bootHost(options: {
  sb: VerificationSandbox;
  module?: Partial<VerificationModuleOptions>;
  platform?: Platform;
  imports?: (Type | DynamicModule)[];
  logger?: LoggerService;
}): Promise<TestApp> {
  return createTestApp({
    platform: options.platform ?? 'express',
    module: VerificationModule.forRoot({ ...sandboxOptions(options.sb, options.module), isGlobal: true }),
    imports: options.imports,
    logger: options.logger,
  });
}

/** Resolves once `condition()` holds (checked every 5 ms), or rejects after `timeoutMs` with `what`. */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
