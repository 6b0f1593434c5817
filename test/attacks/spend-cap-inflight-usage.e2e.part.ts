/**
 * Attack 43: the usage reconcile counts starts still in flight (reserved, the API not yet answered)
 * as money the API did not charge. `back = min(unproven, counted - live - charged)`: a reservation
 * whose POST /v1/verify has not answered is in `counted`, not in `live`, and not yet in the API's
 * usage, so it is taken for an unproven session the API did not charge, and that much of the
 * charged-but-unseen SMS comes back. Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from '../protection/protection-host.js';
import { DAY_MS, toJustPast } from '../support/utc-bounds.js';

describe.each(ONE_PLATFORM)('the cap and starts in flight at the usage read (%s)', (platform) => {
  const fx = protectionFixture();

  it('a usage read while paid starts are in flight gives back nothing that was charged: the cap is passed by at most one price', async () => {
    const apiKey = fx.sb.demoAccount.apiKey;
    await fx.sb.updateAccount(apiKey, {
      population: {
        methods: { sms: { deliveryRate: 1, deliveryTime: { medianMs: 1_000 }, completionRate: 0 } },
      },
    });
    const balance = (): number => fx.sb.getAccount(apiKey)!.balance.amount;
    // The cap's window is the UTC day and the steps take over 6 minutes: start them just past a midnight, or a
    // run a few minutes before one opens a second window, a second 30 RUB, and 5 SMS pass the full cap.
    await fx.sb.advance(toJustPast(fx.sb.now(), DAY_MS));
    const before = balance();
    // Ten SMS at 3 RUB.
    fx.host = await protectedHost(fx.sb, platform, {
      pumping: false,
      spendCap: { amount: 30, windowMs: 86_400_000 },
    });
    const host = fx.host;

    // 1. Five SMS delivered (and charged) while status reads fail: they end unproven, still counted.
    fx.sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
    const ids: unknown[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await startFrom(host, freshIp(), freshPhone());
      expect(r.status).toBe(201);
      ids.push(r.body.verification_id);
    }
    await fx.sb.advance(2_000);
    await fx.sb.advance(6 * 60_000);
    fx.sb.clearFaults();
    for (const id of ids)
      expect((await call(host.url, 'GET', `/verification/status/${String(id)}`)).body.status).toBe('expired');

    // 2. Five more starts, the API slow to answer: the cap is now full of them.
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 1_500, count: 5 });
    const slow = Array.from({ length: 5 }, () => startFrom(host, freshIp(), freshPhone()));
    await new Promise((resolve) => setTimeout(resolve, 400));

    // 3. Meanwhile, starts go on until the cap refuses.
    let sent = 0;
    for (let i = 0; i < 10; i++) {
      const r = await startFrom(host, freshIp(), freshPhone());
      if (r.status !== 201) break;
      sent += 1;
    }
    for (const r of await Promise.all(slow)) expect(r.status).toBe(201);
    await fx.sb.advance(2_000);
    for (let i = 0; i < 10; i++) {
      const r = await startFrom(host, freshIp(), freshPhone());
      if (r.status !== 201) break;
      sent += 1;
    }
    await fx.sb.advance(2_000);

    // Every SMS was delivered, so charged: 30 RUB of cap, at most one 3 RUB price over.
    // (On the code under attack: 5 more SMS past the full cap, 45 RUB charged.)
    expect({ sentPastTheCap: sent, charged: before - balance() }).toEqual({
      sentPastTheCap: sent <= 1 ? sent : '<= 1',
      charged: before - balance() <= 30 + 3 ? before - balance() : '<= 33 RUB',
    });
  });
});
