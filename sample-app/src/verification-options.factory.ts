import type { ConfigService } from '@nestjs/config';
import type { VerificationModuleOptions } from 'nestjs-phone-verification';
import type { VerificationSandbox } from 'nestjs-phone-verification/testing';
import { readLiveApiSettings } from './verification-env.js';
import type { VerificationTarget } from './verification-target.js';

const HOUR_MS = 3_600_000;

/**
 * VerificationModule's options, as a host builds them from its configuration. Everything is the
 * same in both modes except where the API is and, in sandbox mode, the clock and the start limits.
 */
export function verificationOptionsFor(
  config: ConfigService,
  target: VerificationTarget,
): VerificationModuleOptions {
  if (target.sandbox) return sandboxOptions(target.sandbox);
  // The target is live only when all four variables are set.
  const live = readLiveApiSettings(config)!;
  return {
    api: { baseUrl: live.baseUrl, apiKey: live.apiKey, apiSecret: live.apiSecret },
    webhooks: { secret: live.webhookSecret },
  };
}

function sandboxOptions(sandbox: VerificationSandbox): VerificationModuleOptions {
  return {
    api: {
      baseUrl: sandbox.url,
      apiKey: sandbox.demoAccount.apiKey,
      apiSecret: sandbox.demoAccount.apiSecret,
    },
    webhooks: { secret: sandbox.demoAccount.webhookSecret },
    // The sandbox's clock, so that its time travel (the simulated phone's "+1 min") moves expiry,
    // the resend cooldown and the rate-limit windows too.
    clock: () => sandbox.now(),
    // A person trying every method on one number, from one browser, stays within the limits; the
    // 60 s resend cooldown per number is the default, to show the page's rate-limit wait.
    limits: {
      startPerIp: { points: 200, windowMs: HOUR_MS },
      startPerPhone: { points: 30, windowMs: HOUR_MS },
      startPerPhoneAndCaller: { points: 30, windowMs: HOUR_MS },
    },
  };
}
