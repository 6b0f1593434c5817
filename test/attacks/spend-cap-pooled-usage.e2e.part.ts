/**
 * Attack S (spend cap under named registrations): two named registrations, each on its own API account,
 * on one Redis with one `keyPrefix` the host chose for both: their spend cap is one pooled counter ("with
 * one prefix the host chose they share (the spend cap's window counts both)", several-accounts.md). The
 * usage reconcile compares that pooled counter (and the pooled live and unproven figures) with what ONE
 * account's `GET /v1/usage` says it charged. South's SMS, delivered and charged while status reads fail,
 * end unproven and fill the cap; north's first start meets the full cap, reads north's usage (nothing
 * charged) and takes the whole unproven total for money the API did not charge: south's 30 RUB come back,
 * and north spends another full cap. The host, who set 30 RUB a day for both, pays 60.
 *
 * Expected: a registration gives back only what its own account did not charge (the pooled cap passed by
 * at most one price across both accounts).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { DAY_MS, toJustPast } from '../support/utc-bounds.js';
import { call, createTestApp, ONE_PLATFORM } from '../support/verification-app.js';
import { capRegistration, startOn } from './spend-cap-registrations.js';

describe('a spend cap two registrations pool, reconciled with one account’s usage', () => {
  const suite = sandboxSuite({ freezeClock: false });

  it('gives back only what the reading account did not charge: both accounts together pay at most the cap and one price', async () => {
    const sb = suite.sb;
    // The cap's window is the UTC day: start just past a midnight so the steps stay in one window.
    await sb.advance(toJustPast(sb.now(), DAY_MS));
    const tag = randomUUID().slice(0, 8);
    const names = [`north${tag}`, `south${tag}`] as const;
    const keyPrefix = `pv-shared:${randomUUID()}:`;
    const accounts = await Promise.all(names.map(() => sb.createAccount({ balance: 1_000 })));
    for (const account of accounts)
      await sb.updateAccount(account.apiKey, {
        population: {
          methods: { sms: { deliveryRate: 1, deliveryTime: { medianMs: 1_000 }, completionRate: 0 } },
        },
      });
    const registrations = names.map((name, i) => capRegistration(sb, accounts[i]!, name, keyPrefix));
    const [first, ...others] = registrations.map((options) => VerificationModule.forRoot(options));
    suite.host = await createTestApp({ platform: ONE_PLATFORM[0]!, module: first!, imports: others });
    const host = suite.host;
    const [north, south] = names;
    const start = (name: string) => startOn(host.url, name);
    const balances = (): number =>
      accounts.reduce((sum, a) => sum + sb.getAccount(a.apiKey)!.balance.amount, 0);
    const before = balances();

    // 1. South's ten SMS, delivered (and charged) while status reads fail: they end unproven, the cap full.
    sb.addFault({ route: 'GET /v1/verify/:id', kind: 'status', status: 503, count: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await start(south);
      expect(r.status).toBe(201);
      ids.push(String(r.body.verification_id));
    }
    await sb.advance(2_000);
    await sb.advance(6 * 60_000);
    sb.clearFaults();
    for (const id of ids) {
      let status: unknown;
      for (let read = 0; read < 20 && status !== 'expired'; read++) {
        status = (await call(host.url, 'GET', `/${south}/verification/status/${id}`)).body.status;
        if (status !== 'expired') await sb.advance(3_000);
      }
      expect(status).toBe('expired');
    }
    expect((await start(south)).status).toBe(503);

    // 2. North starts until the pooled cap refuses.
    await sb.advance(31_000);
    let sent = 0;
    for (let i = 0; i < 12; i++) {
      const r = await start(north);
      if (r.status !== 201) break;
      sent += 1;
    }
    await sb.advance(2_000);

    // Every SMS was delivered, so charged: 30 RUB of pooled cap, at most one 3 RUB price over.
    const charged = Math.round((before - balances()) * 100) / 100;
    expect({ northSentPastTheCap: sent, charged }).toEqual({
      northSentPastTheCap: sent <= 1 ? sent : '<= 1',
      charged: charged <= 33 ? charged : '<= 33 RUB',
    });
  });
});
