/**
 * Two named registrations, north and south (names unique per boot), each on an API account of its own
 * with its routes under `/<name>/verification`, in one host app and on the store option the test gives
 * each (one store instance, one Redis URL with or without a prefix the host chose): the host of the
 * suites on registrations sharing a store. With `unnamedNorth`, north is the unnamed registration (its
 * routes still under `/<north>/verification`); `providers` are the host's own.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { expect } from '@jest/globals';
import type { Provider } from '@nestjs/common';
import { VerificationModule } from '../../src/module/verification.module.js';
import { getVerificationToken } from '../../src/module/verification-registration.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { VerificationReconciler } from '../../src/sessions/verification.reconciler.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

export interface TwoRegistrations {
  app: TestApp;
  /** The route prefixes' names (north's also when it is the unnamed registration). */
  names: [north: string, south: string];
  /** Each registration's `name` option: north's undefined when it is the unnamed one. */
  registrations: [north: string | undefined, south: string];
}

export const phoneNumber = (): string => `+7916${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

/** Boots both registrations, webhooks off (outcomes reach a registration by its reconciler or its routes). */
export async function bootTwoRegistrations(
  sb: VerificationSandbox,
  store: () => VerificationModuleOptions['store'],
  extra: Partial<VerificationModuleOptions> = {},
  { unnamedNorth = false, providers }: { unnamedNorth?: boolean; providers?: Provider[] } = {},
): Promise<TwoRegistrations> {
  const tag = randomUUID().slice(0, 8);
  const names: [string, string] = [`north${tag}`, `south${tag}`];
  const named: [string | undefined, string] = [unnamedNorth ? undefined : names[0], names[1]];
  const registrations = await Promise.all(
    names.map(async (name, i): Promise<VerificationModuleOptions> => {
      const account = await sb.createAccount({ balance: 100 });
      return {
        ...moduleOptions(sb, {}, account),
        name: named[i],
        routes: { prefix: `${name}/verification` },
        webhooks: { enabled: false },
        store: store(),
        ...extra,
      };
    }),
  );
  const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
  const app = await createTestApp({ platform: ONE_PLATFORM[0]!, module: first!, imports: others, providers });
  return { app, names, registrations: named };
}

export const reconcilerOf = (app: TestApp, name: string): VerificationReconciler =>
  app.app.get(getVerificationToken(VerificationReconciler, name), { strict: false });

/** Starts `method` for `phone` on registration `name`'s route (as user `sue`): its verification id. */
export async function startOn(
  host: TestApp,
  name: string,
  phone: string,
  method = 'reverse_flash_call',
): Promise<string> {
  const started = await call(
    host.url,
    'POST',
    `/${name}/verification/start`,
    { phone_number: phone, method },
    { 'x-user': 'sue' },
  );
  expect(started.status).toBe(201);
  return String(started.body.verification_id);
}

/**
 * South's session of `phone` is due; north's reconciler passes first, then the user calls (the host is
 * charged on this proof) and closes the page (nobody polls), and south's reconciler passes five times.
 */
export async function northReconcilesFirst(
  sb: VerificationSandbox,
  { app, names: [north, south] }: TwoRegistrations,
  requestId: string,
  phone: string,
): Promise<void> {
  await sb.advance(60_000);
  await reconcilerOf(app, north).runOnce();
  await sb.call(requestId, phone);
  for (let i = 0; i < 5; i += 1) {
    await sb.advance(60_000);
    await reconcilerOf(app, south).runOnce();
  }
}

/** The registrations that emitted `verification.verified` for `requestId`. */
export const verifiedBy = (app: TestApp, requestId: string): (string | undefined)[] =>
  app.events
    .filter((e) => e.requestId === requestId && e.event === 'verification.verified')
    .map((e) => e.registration);
