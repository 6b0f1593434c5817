/**
 * The `store` option in each of its shapes under two named registrations of one app: a Redis URL, the
 * host's own Redis client, and a ready store. Two registrations given the same Redis (by URL or by
 * client) without a `keyPrefix` keep apart (each under `pv:{name}:`); with one prefix the host chose
 * they share (the spend cap's window counts both). A store the module opened is closed with the app (one on the
 * host's Redis client too: it takes no command after the app closed); the host's client and store are not.
 * One ready store given to both pools protection's counters but keeps each one's own state (its
 * ledger) under its name.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { moduleOptions } from '../webhooks/harness.js';
import { eventually, sharedRedisUrl, ThrowawayRedisServer } from '../support/redis-server.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import { getVerificationToken } from '../../src/module/verification-registration.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('named registrations and the shapes of their store', () => {
  const phoneNumber = () => `+7916${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let hostRedis: Redis;
  let host: TestApp | undefined;
  const ownStores: MemoryStore[] = [];
  beforeAll(async () => {
    sb = suite.sb;
    hostRedis = new Redis(sharedRedisUrl());
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    await Promise.all(ownStores.splice(0).map((store) => store.close()));
  });
  afterAll(async () => {
    await hostRedis.quit();
  });

  interface Shape {
    name: string;
    /** Each registration's `store`. */
    store(name: string): StoreOption;
    /** Whether the two registrations share their counters. */
    shared: boolean;
  }

  const SHAPES: Shape[] = [
    { name: 'a Redis URL, no keyPrefix', store: () => ({ url: sharedRedisUrl() }), shared: false },
    { name: "the host's Redis client, no keyPrefix", store: () => ({ redis: hostRedis }), shared: false },
    {
      name: 'a ready store of its own each',
      store: () => {
        const own = new MemoryStore({ clock: () => sb.now() });
        ownStores.push(own);
        return own;
      },
      shared: false,
    },
    {
      name: 'a Redis URL with one keyPrefix the host chose for both',
      store: () => ({ url: sharedRedisUrl(), keyPrefix: sharedPrefix }),
      shared: true,
    },
  ];
  let sharedPrefix = '';

  /** This test's two registration names: new ones each test, so no test reads another's Redis keys. */
  let names: [string, string] = ['north', 'south'];

  async function bootTwo(shape: Shape, extra: Partial<VerificationModuleOptions> = {}): Promise<TestApp> {
    sharedPrefix = `pv-shared:${randomUUID()}:`;
    const tag = randomUUID().slice(0, 8);
    names = [`north${tag}`, `south${tag}`];
    const registrations = await Promise.all(
      names.map(async (name): Promise<VerificationModuleOptions> => {
        const account = await sb.createAccount({ balance: 100 });
        return {
          ...moduleOptions(
            sb,
            {
              limits: {
                startPerIp: false,
                startPerPhoneAndCaller: false,
                resendCooldownMs: false,
                pumping: false,
                startPerPhone: false,
                // One SMS (3.00) fits; a second in the same registration's window does not.
                spendCap: { amount: 4, windowMs: 86_400_000 },
              },
            },
            account,
          ),
          ...extra,
          name,
          routes: { prefix: `${name}/verification` },
          webhooks: { secret: account.webhookSecret, path: `${name}-webhooks` },
          store: shape.store(name),
        };
      }),
    );
    const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
    return createTestApp({ platform: ONE_PLATFORM[0]!, module: first!, imports: others });
  }

  const start = (app: TestApp, name: string, phone_number: string, method = 'sms') =>
    call(app.url, 'POST', `/${name}/verification/start`, { phone_number, method }, { 'x-user': 'u1' });

  describe.each(SHAPES)('named registrations, store as $name', (shape) => {
    it(`each registration's spend cap is ${shape.shared ? 'shared' : 'its own'}; the app closes only what the module opened`, async () => {
      host = await bootTwo(shape);
      const [north, south] = names;
      expect((await start(host, north, phoneNumber())).status).toBe(201);
      // A second SMS in north passes its cap.
      expect((await start(host, north, phoneNumber())).status).toBe(503);
      expect((await start(host, south, phoneNumber())).status).toBe(shape.shared ? 503 : 201);
      await host.close();
      host = undefined;
      // The host's own client and stores stay usable after the app closed.
      await expect(hostRedis.ping()).resolves.toBe('PONG');
      for (const own of ownStores) await expect(own.set('after-close', '1', 1000)).resolves.toBeUndefined();
    });
  });

  describe('named registrations, one ready store given to both', () => {
    it("pools protection's counters (one spend cap) and keeps each registration's own state apart: its ledger counts its own starts only", async () => {
      const one = new MemoryStore({ clock: () => sb.now() });
      ownStores.push(one);
      host = await bootTwo({ name: 'one store', store: () => one, shared: true }, { ledger: {} });
      const [north, south] = names;
      expect((await start(host, north, phoneNumber())).status).toBe(201);
      // The spend cap is pooled: south's first SMS does not fit beside north's.
      expect((await start(host, south, phoneNumber())).status).toBe(503);
      const started = async (name: string) =>
        (await host!.app.get<VerificationLedger>(getVerificationToken(VerificationLedger, name)).report())
          .totals.started;
      expect([await started(north), await started(south)]).toEqual([1, 0]);
    });
  });

  describe('a store the module opened from a URL', () => {
    it('is closed with the app: its Redis connections end, so the process can exit', async () => {
      const server = await ThrowawayRedisServer.start();
      const admin = new Redis(server.url);
      const clients = async (): Promise<number> =>
        Number(/connected_clients:(\d+)/.exec(await admin.info('clients'))?.[1]);
      try {
        host = await createTestApp({
          platform: ONE_PLATFORM[0]!,
          module: { ...moduleOptions(sb), store: { url: server.url } },
        });
        const started = await call(host.url, 'POST', '/verification/start', {
          phone_number: phoneNumber(),
          method: 'sms',
        });
        expect(started.status).toBe(201);
        expect(await clients()).toBeGreaterThan(1);
        await host.close();
        host = undefined;
        await eventually(async () => expect(await clients()).toBe(1), 2000);
      } finally {
        await admin.quit();
        await server.stop();
      }
    });
  });

  describe("a store the module made on the host's Redis client", () => {
    it('is closed with the app: it takes no more commands, while the host’s client stays open', async () => {
      host = await createTestApp({
        platform: ONE_PLATFORM[0]!,
        module: {
          ...moduleOptions(sb),
          store: { redis: hostRedis, keyPrefix: `pv-closed:${randomUUID()}:` },
        },
      });
      const started = await call(host.url, 'POST', '/verification/start', {
        phone_number: phoneNumber(),
        method: 'sms',
      });
      expect(started.status).toBe(201);
      const store = host.app.get<VerificationStore>(VerificationStore);
      await expect(store.get('before-close')).resolves.toBeNull();
      await host.close();
      host = undefined;
      await expect(store.get('after-close')).rejects.toBeInstanceOf(VerificationStoreUnavailableError);
      await expect(store.set('after-close', '1', 1000)).rejects.toBeInstanceOf(
        VerificationStoreUnavailableError,
      );
      await expect(hostRedis.ping()).resolves.toBe('PONG');
    });
  });
});
