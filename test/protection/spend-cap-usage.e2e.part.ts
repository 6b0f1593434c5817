/**
 * The spend cap learns from the API's usage what it did not charge: SMS the module never saw
 * delivered (status reads failing) stay counted when their sessions end (`unproven`), and only the
 * day's `GET /v1/usage` gives back what the API did not charge for them (SpendEvidence).
 */
import { describe, expect, it } from '@jest/globals';
import { call, PLATFORMS } from '../support/verification-app.js';
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
