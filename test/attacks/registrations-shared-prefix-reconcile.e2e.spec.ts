/**
 * Attack (lane attack-44c): two named registrations, each on its own API account, on one Redis with
 * one `keyPrefix` the host chose for both (a shape test/registration/named-store-shapes supports: "with
 * one prefix the host chose they share (the spend cap's window counts both)"). Their reconcilers then
 * share one due-queue (`reconcile`) and one record keyspace, but each asks its own account. North's
 * reconciler claims a session south started, asks north's account about it, is told 404 and releases
 * it for good ("the API no longer knows a session the module started; it is no longer polled").
 * South's user then verifies by a reverse flash call (charged on proof: the host pays for it) and
 * closes the page: no webhook (webhooks off), no status poll, and the reconciler that was the safety
 * net no longer has the session. South never emits `verification.verified`: the host paid for a
 * verification its app never hears of, and the user's sign-up never completes. With a prefix of its
 * own each (the default), the same steps end with the event.
 *
 * Expected: a registration's reconciler never drops a session it did not start (each registration's
 * due-queue its own, or a foreign session skipped), or two registrations on one prefix refused at boot.
 * Medium (the host pays for a verification it never learns of; a real user's verification is lost).
 * FAILS ON PURPOSE on the current code.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import { getVerificationToken } from '../../src/module/verification-registration.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { VerificationReconciler } from '../../src/sessions/verification.reconciler.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let sb: VerificationSandbox;
let host: TestApp | undefined;
beforeAll(async () => {
  sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
});
afterEach(async () => {
  await host?.close();
  host = undefined;
});
afterAll(async () => {
  await sb?.close();
});

const phoneNumber = () => `+7916${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

async function bootTwo(sharedPrefix: string | undefined): Promise<{ app: TestApp; names: [string, string] }> {
  const tag = randomUUID().slice(0, 8);
  const names: [string, string] = [`north${tag}`, `south${tag}`];
  const registrations = await Promise.all(
    names.map(async (name): Promise<VerificationModuleOptions> => {
      const account = await sb.createAccount({ balance: 100 });
      return {
        ...moduleOptions(sb, {}, account),
        name,
        routes: { prefix: `${name}/verification` },
        webhooks: { enabled: false },
        store:
          sharedPrefix === undefined
            ? { url: sharedRedisUrl() }
            : { url: sharedRedisUrl(), keyPrefix: sharedPrefix },
      };
    }),
  );
  const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
  const app = await createTestApp({ platform: ONE_PLATFORM[0]!, module: first!, imports: others });
  return { app, names };
}

const reconcilerOf = (app: TestApp, name: string): VerificationReconciler =>
  app.app.get(getVerificationToken(VerificationReconciler, name), { strict: false });

describe.each([
  ['a prefix of its own each (the default)', undefined],
  ['one keyPrefix the host chose for both', 'shared'],
])('two accounts, two named registrations, one Redis: %s', (_label, shared) => {
  it("one registration's reconciler does not drop the other's session: its verified outcome is emitted", async () => {
    const booted = await bootTwo(shared === undefined ? undefined : `pv-shared:${randomUUID()}:`);
    host = booted.app;
    const [north, south] = booted.names;
    const phone = phoneNumber();
    const started = await call(
      host.url,
      'POST',
      `/${south}/verification/start`,
      { phone_number: phone, method: 'reverse_flash_call' },
      { 'x-user': 'sue' },
    );
    expect(started.status).toBe(201);
    const [session] = sb.sessionsFor(phone);
    const requestId = session!.request_id;

    // Both reconcilers tick; here north's pass comes first once south's session is due.
    await sb.advance(60_000);
    await reconcilerOf(host, north).runOnce();
    // The user calls (the host is charged on this proof) and closes the page: nobody polls.
    await sb.call(requestId, phone);
    for (let i = 0; i < 5; i += 1) {
      await sb.advance(60_000);
      await reconcilerOf(host, south).runOnce();
    }
    // The API has it verified (and charged); south's app was told nothing.
    expect(sb.getSession(requestId)?.status).toBe('verified');
    const verified = host.events.filter(
      (e) => e.requestId === requestId && e.event === 'verification.verified',
    );
    expect(verified.map((e) => e.registration)).toEqual([south]);
  });
});
