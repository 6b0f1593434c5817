/**
 * A named registration's own state on a store several registrations share: one store instance the host
 * gave both (Memory and Redis), beside the shared keyPrefix of test/attacks/registrations-shared-prefix-
 * reconcile. Each registration's reconcile queue holds only its own sessions (north's stays empty after
 * south's start), and south's verified outcome is emitted though north's reconciler ran first.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import { getVerificationToken } from '../../src/module/verification-registration.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { VerificationReconciler } from '../../src/sessions/verification.reconciler.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

let sb: VerificationSandbox;
let host: TestApp | undefined;
let store: VerificationStore | undefined;
beforeAll(async () => {
  sb = await VerificationSandbox.start({ port: 0, freezeClock: true });
});
afterEach(async () => {
  await host?.close();
  host = undefined;
  await store?.close();
  store = undefined;
});
afterAll(async () => {
  await sb?.close();
});

const phoneNumber = () => `+7916${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

async function bootTwo(shared: VerificationStore): Promise<{ app: TestApp; names: [string, string] }> {
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
        store: shared,
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
  ['one MemoryStore instance', () => new MemoryStore({ clock: () => sb.now() })],
  [
    'one RedisStore instance',
    () =>
      new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv-one:${randomUUID()}:`, clock: () => sb.now() }),
  ],
])('two named registrations given %s', (_label, make: () => VerificationStore) => {
  it("each reconciler follows only its own sessions; south's verified outcome is emitted", async () => {
    store = make();
    const booted = await bootTwo(store);
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
    expect(await reconcilerOf(host, north).pending()).toBe(0);
    expect(await reconcilerOf(host, south).pending()).toBe(1);
    const requestId = sb.sessionsFor(phone)[0]!.request_id;
    await sb.advance(60_000);
    await reconcilerOf(host, north).runOnce();
    await sb.call(requestId, phone);
    for (let i = 0; i < 5; i += 1) {
      await sb.advance(60_000);
      await reconcilerOf(host, south).runOnce();
    }
    const verified = host.events.filter(
      (e) => e.requestId === requestId && e.event === 'verification.verified',
    );
    expect(verified.map((e) => e.registration)).toEqual([south]);
  });
});
