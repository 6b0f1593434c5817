/**
 * The spend cap learns from the API's usage what it did not charge: SMS the module never saw
 * delivered (status reads failing) stay counted when their sessions end (`unproven`), and only the
 * day's `GET /v1/usage` gives back what the API did not charge for them (SpendEvidence).
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, ONE_PLATFORM, PLATFORMS } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  refusal,
  startFrom,
} from './protection-host.js';

describe.each(PLATFORMS)('the spend cap and the API usage (%s)', (platform) => {
  const fx = protectionFixture();

  it('a cap filled by SMS nobody saw delivered, and the API did not charge, opens again once its usage says so', async () => {
    await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, {
      population: { methods: { sms: { deliveryRate: 0, completionRate: 0 } } },
    });
    // Five SMS at 3 RUB fill the cap.
    fx.host = await protectedHost(fx.sb, platform, {
      pumping: false,
      spendCap: { amount: 15, windowMs: 86_400_000 },
    });
    const host = fx.host;
    fx.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
    const ids: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await startFrom(host, freshIp(), freshPhone());
      expect(r.status).toBe(201);
      ids.push(r.body.verification_id);
    }
    await fx.sb.advance(6 * 60_000);
    fx.sb.clearFaults();
    for (const id of ids)
      expect((await call(host.url, 'GET', `/verification/status/${String(id)}`)).body.status).toBe('expired');

    // Nothing was delivered, so nothing was charged: the next start reads the usage and goes out.
    const next = await startFrom(host, freshIp(), freshPhone());
    expect({ status: next.status, refusal: next.status === 201 ? undefined : refusal(next) }).toEqual({
      status: 201,
      refusal: undefined,
    });
  });
});

/** The store a host keeps its cap in: the module's own MemoryStore, or a Redis the module opens from a URL. */
const STORES: [string, () => VerificationModuleOptions['store']][] = [
  ['MemoryStore', () => undefined],
  [
    'RedisStore',
    () => ({ url: sharedRedisUrl(), keyPrefix: `cap-usage:${randomBytes(4).toString('hex')}:` }),
  ],
];

describe.each(ONE_PLATFORM)("the spend cap, the day's usage and how sessions end (%s)", (platform) => {
  const fx = protectionFixture();

  // A session the API ends `failed` is a session's end as much as an expiry: an SMS whose channel gave up
  // before delivery was not charged, and the usage gives its reservation back as it does an expired one's.
  it.each(STORES)(
    'a cap filled by SMS that failed undelivered, which the API did not charge, opens again once its usage says so (%s)',
    async (_store, store) => {
      await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, {
        population: {
          methods: {
            sms: { deliveryRate: 0, deliveryTime: { medianMs: 8000, p90Ms: 8000 }, undelivered: 'fail' },
          },
        },
      });
      // Five SMS at 3 RUB fill the cap.
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { pumping: false, spendCap: { amount: 15, windowMs: 86_400_000 } },
        { store: store() },
      );
      const host = fx.host;
      const ids: unknown[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await startFrom(host, freshIp(), freshPhone());
        expect(r.status).toBe(201);
        ids.push(r.body.verification_id);
      }
      const full = await startFrom(host, freshIp(), freshPhone());
      expect(refusal(full)).toMatchObject({ status: 503, reason: 'spend_cap' });

      // Each channel gives up at 8 s: the sessions fail, nothing delivered, nothing charged.
      await fx.sb.advance(8_001);
      for (const id of ids)
        expect((await call(host.url, 'GET', `/verification/status/${String(id)}`)).body.status).toBe(
          'failed',
        );

      // The usage read 30 s after the refusal's says the API charged none of them: the next start goes out.
      await fx.sb.advance(30_000);
      const next = await startFrom(host, freshIp(), freshPhone());
      expect({ status: next.status, refusal: next.status === 201 ? undefined : refusal(next) }).toEqual({
        status: 201,
        refusal: undefined,
      });
    },
  );

  // The other side: the usage is read for the cap's own day. SMS the API delivered, and so charged, while
  // the module's status reads failed end counted as unproven; the day's usage shows them charged, so
  // nothing comes back and the cap stays closed (another day's usage, empty, would open it).
  it.each(STORES)(
    'a cap filled by SMS the API delivered and charged, which the module never saw delivered, stays closed after the usage read (%s)',
    async (_store, store) => {
      await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, {
        population: { methods: { sms: { deliveryRate: 1, completionRate: 0 } } },
      });
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { pumping: false, spendCap: { amount: 15, windowMs: 86_400_000 } },
        { store: store() },
      );
      const host = fx.host;
      fx.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
      const ids: unknown[] = [];
      const phones: string[] = [];
      for (let i = 0; i < 5; i++) {
        phones.push(freshPhone());
        const r = await startFrom(host, freshIp(), phones[i]!);
        expect(r.status).toBe(201);
        ids.push(r.body.verification_id);
      }
      await fx.sb.advance(6 * 60_000);
      fx.sb.clearFaults();
      for (const id of ids)
        expect((await call(host.url, 'GET', `/verification/status/${String(id)}`)).body.status).toBe(
          'expired',
        );
      // Delivered, so charged by the API, though never seen delivered here.
      expect(phones.map((phone) => fx.sb.sessionsFor(phone)[0]?.charged)).toEqual(phones.map(() => true));

      const next = await startFrom(host, freshIp(), freshPhone());
      expect(refusal(next)).toMatchObject({ status: 503, reason: 'spend_cap' });
    },
  );
});
