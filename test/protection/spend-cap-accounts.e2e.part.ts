/**
 * Two API accounts on one pooled spend cap (two registrations on one store): each account's usage gives
 * back only its own unproven SMS (SpendEvidence, scoped by ProtectionKeys.spendAccount). North's SMS,
 * verified and then recalculated down by the API, is not north's to take back out of south's unproven SMS,
 * which south's API charged.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreOption } from '../../src/store/create-store.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { DAY_MS, toJustPast } from '../support/utc-bounds.js';
import { call, createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { freshPhone } from './protection-host.js';

/** The one store both registrations are given: a MemoryStore on the sandbox clock, or a Redis URL and keyPrefix. */
const STORES: [string, (sb: VerificationSandbox) => StoreOption][] = [
  ['MemoryStore', (sb) => new MemoryStore({ clock: () => sb.now() })],
  ['RedisStore', () => ({ url: sharedRedisUrl(), keyPrefix: `cap-accounts:${randomUUID()}:` })],
];

describe.each(ONE_PLATFORM)('one spend cap, two API accounts (%s)', (platform) => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    await host?.close();
    host = undefined;
    for (const store of stores.splice(0)) await store.close();
  });

  it.each(STORES)(
    "an account's recalculated charge is not given back out of the other account's unproven SMS (%s)",
    async (_name, storeOf) => {
      const sb = suite.sb;
      await sb.advance(toJustPast(sb.now(), DAY_MS));
      const store = storeOf(sb);
      if (store instanceof MemoryStore) stores.push(store);
      const names = ['north', 'south'] as const;
      const registrations = await Promise.all(
        names.map(async (name): Promise<VerificationModuleOptions> => {
          const account = await sb.createAccount({ balance: 100 });
          return {
            ...moduleOptions(sb, {}, account),
            name,
            store,
            routes: { prefix: `${name}/verification` },
            webhooks: { secret: account.webhookSecret, path: `${name}-webhooks` },
            // Two SMS (3 RUB each) fill it: a third does not fit.
            limits: {
              startPerIp: false,
              startPerPhone: false,
              startPerPhoneAndCaller: false,
              freeStartPerCaller: false,
              resendCooldownMs: false,
              pumping: false,
              spendCap: { amount: 6.5, windowMs: DAY_MS },
            },
          };
        }),
      );
      const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
      host = await createTestApp({ platform, module: first!, imports: others });
      const url = host.url;
      const start = (name: string, phone = freshPhone()) =>
        call(url, 'POST', `/${name}/verification/start`, { phone_number: phone, method: 'sms' });
      const status = (name: string, id: unknown) =>
        call(url, 'GET', `/${name}/verification/status/${String(id)}`);
      const sessionOf = (phone: string) => sb.sessionsFor(phone).at(-1)!.request_id;

      // North's SMS is delivered and verified (charged, as the module saw); the API then recalculates it to 0.
      const northPhone = freshPhone();
      const north = await start('north', northPhone);
      expect(north.status).toBe(201);
      const northRid = sessionOf(northPhone);
      await sb.deliver(northRid);
      const code = String(sb.getSession(northRid)!.code);
      const checked = await call(url, 'POST', '/north/verification/check', {
        verification_id: north.body.verification_id,
        code,
      });
      expect(checked.body).toMatchObject({ verified: true });
      await sb.recalculate(northRid, 0);

      // South's SMS goes out while status reads fail: delivered and charged by its API, never seen delivered.
      sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
      const southPhone = freshPhone();
      const south = await start('south', southPhone);
      expect(south.status).toBe(201);
      await sb.deliver(sessionOf(southPhone));
      await sb.advance(6 * 60_000);
      sb.clearFaults();
      expect((await status('south', south.body.verification_id)).body.status).toBe('expired');

      // 6 RUB counted: a third SMS does not fit. North's usage read finds nothing of north's unproven to give
      // back; south's finds its SMS charged. Both stay refused.
      for (const name of names) {
        const refused = await start(name);
        expect({ name, status: refused.status, reason: refused.body.reason }).toEqual({
          name,
          status: 503,
          reason: 'spend_cap',
        });
      }
    },
  );
});
