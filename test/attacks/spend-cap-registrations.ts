/**
 * The host the spend-cap attacks on named registrations share: registrations on one Redis prefix, each on its own
 * routes and API account, every limit off but a pooled cap of ten SMS at 3 RUB, no webhooks or reconciler (a
 * session's end is what the test drives).
 */
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { DAY_MS } from '../support/utc-bounds.js';
import { call } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { freshPhone } from '../protection/protection-host.js';

type Account = Parameters<typeof moduleOptions>[2];

/** One registration `name` on `account`, its routes under `/<name>/verification`, its cap pooled under `keyPrefix`. */
export function capRegistration(
  sb: VerificationSandbox,
  account: Account,
  name: string,
  keyPrefix: string,
): VerificationModuleOptions {
  return {
    ...moduleOptions(sb, {}, account),
    name,
    routes: { prefix: `${name}/verification` },
    webhooks: { enabled: false },
    reconcile: { enabled: false },
    store: { url: sharedRedisUrl(), keyPrefix },
    limits: {
      startPerIp: false,
      startPerPhone: false,
      startPerPhoneAndCaller: false,
      resendCooldownMs: false,
      pumping: false,
      // Ten SMS at 3 RUB, for the registrations together.
      spendCap: { amount: 30, windowMs: DAY_MS },
    },
  };
}

/** An SMS start to a fresh number on registration `name`'s routes of the host at `url`. */
export function startOn(url: string, name: string) {
  return call(url, 'POST', `/${name}/verification/start`, { phone_number: freshPhone(), method: 'sms' });
}
