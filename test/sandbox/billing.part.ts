import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api, balanceOf, control, initiate, type Creds } from './sandbox-client.js';

/** The spec's billing table and rules; every test works on a fresh account with a known balance. */
describe('sandbox billing', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const account = (balance = 100): Promise<Creds> => sb.createAccount({ balance });
  const check = (creds: Creds, id: string, code: string) =>
    api(sb, 'POST', '/v1/verify/check', { creds, body: { request_id: id, code } });

  describe('reverse_flash_call: charged only on verified', () => {
    it('is charged when the call verifies it', async () => {
      const c = await account();
      const s = await initiate(sb, '+79993330001', 'reverse_flash_call', c);
      expect(await balanceOf(sb, c)).toBe(100);
      await sb.call(s.request_id, '+79993330001');
      expect(await balanceOf(sb, c)).toBe(99.75);
    });

    it('is not charged when it expires, fails, or a wrong number calls', async () => {
      const c = await account();
      const a = await initiate(sb, '+79993330002', 'reverse_flash_call', c, { expiry_seconds: 30 });
      const b = await initiate(sb, '+79993330003', 'reverse_flash_call', c);
      await sb.call(b.request_id, '+79993330009');
      await sb.fail(b.request_id);
      await sb.advance(30_000);
      expect(sb.getSession(a.request_id)).toMatchObject({ status: 'expired', charged: false });
      expect(sb.getSession(b.request_id)).toMatchObject({ status: 'failed', charged: false });
      expect(await balanceOf(sb, c)).toBe(100);
    });
  });

  describe('sms, flash_call, msgr2_bot: charged on delivery', () => {
    it.each([
      ['sms', 97],
      ['flash_call', 99.2],
    ])('%s is charged when the code goes out, once', async (method, after) => {
      const c = await account();
      const s = await initiate(sb, '+79993330010', method, c);
      expect(await balanceOf(sb, c)).toBe(100);
      await sb.deliver(s.request_id);
      expect(await balanceOf(sb, c)).toBe(after);
      await check(c, s.request_id, sb.getSession(s.request_id)!.code!);
      expect(await balanceOf(sb, c)).toBe(after);
    });

    it('msgr2_bot is charged on the share of the same number only', async () => {
      const c = await account();
      const s = await initiate(sb, '+79993330011', 'msgr2_bot', c);
      await sb.share(s.request_id, '+79993330012');
      expect(await balanceOf(sb, c)).toBe(100);
      await sb.share(s.request_id, '+79993330011');
      expect(await balanceOf(sb, c)).toBe(99);
    });

    it('undelivered sessions are not charged: sms expired, msgr2_bot never shared', async () => {
      const c = await account();
      const a = await initiate(sb, '+79993330013', 'sms', c, { expiry_seconds: 30 });
      const b = await initiate(sb, '+79993330014', 'msgr2_bot', c, { expiry_seconds: 30 });
      await sb.advance(30_000);
      expect(sb.getSession(a.request_id)!.charged).toBe(false);
      expect(sb.getSession(b.request_id)!.charged).toBe(false);
      expect(await balanceOf(sb, c)).toBe(100);
    });

    it('an sms verified without a delivery report is charged at verification (the code did go out)', async () => {
      const c = await account();
      const s = await initiate(sb, '+79993330015', 'sms', c);
      await check(c, s.request_id, sb.getSession(s.request_id)!.code!);
      expect(await balanceOf(sb, c)).toBe(97);
    });
  });

  describe('msgr1_otp, operator_id: charged per attempt at initiation', () => {
    it.each([
      ['msgr1_otp', 99.1],
      ['msgr1', 99.1],
      ['operator_id', 98],
    ])('%s is charged at once and stays charged when the session expires', async (method, after) => {
      const c = await account();
      const s = await initiate(sb, '+79993330020', method, c, { expiry_seconds: 30 });
      expect(await balanceOf(sb, c)).toBe(after);
      expect(sb.getSession(s.request_id)!.charged).toBe(true);
      await sb.advance(30_000);
      expect(sb.getSession(s.request_id)!.status).toBe('expired');
      expect(await balanceOf(sb, c)).toBe(after);
    });

    it('each initiation is a separate charge', async () => {
      const c = await account();
      await initiate(sb, '+79993330021', 'operator_id', c);
      await initiate(sb, '+79993330021', 'operator_id', c);
      expect(await balanceOf(sb, c)).toBe(96);
    });
  });

  describe('rules', () => {
    it('1. the price is fixed at initiation in cost; a later price change does not touch it', async () => {
      const c = await account();
      const s = await initiate(sb, '+79993330030', 'sms', c);
      await sb.updateAccount(c.apiKey, { prices: { sms: 5.55 } });
      await sb.deliver(s.request_id);
      expect(await balanceOf(sb, c)).toBe(97);
      const polled = await api(sb, 'GET', `/v1/verify/${s.request_id}`, { creds: c });
      expect(polled.body.cost).toEqual({ amount: 3, currency: 'RUB' });
      const next = await initiate(sb, '+79993330030', 'sms', c);
      expect(next.cost).toEqual({ amount: 5.55, currency: 'RUB' });
    });

    it('2. a failed initiation (4xx) charges nothing and creates nothing', async () => {
      const c = await account(1);
      await sb.updateAccount(c.apiKey, { enabledMethods: ['sms', 'msgr1_otp'] });
      const attempts = [
        { phone_number: '79993330031', method: 'msgr1' }, // 400: not E.164
        { phone_number: '+79993330031', method: 'msgr1', expiry_seconds: 601 }, // 400
        { phone_number: '+79993330031', method: 'operator_id' }, // 403: not enabled
        { phone_number: '+79993330031', method: 'sms' }, // 402: 1.00 < 3.00
      ];
      const statuses: number[] = [];
      for (const body of attempts)
        statuses.push((await api(sb, 'POST', '/v1/verify', { creds: c, body })).status);
      expect(statuses).toEqual([400, 400, 403, 402]);
      expect(await balanceOf(sb, c)).toBe(1);
      expect(sb.sessionsFor('+79993330031')).toHaveLength(0);
    });

    it('3. a zero balance gives 402 insufficient_balance; so does a balance below the price', async () => {
      const zero = await account(0);
      const res = await api(sb, 'POST', '/v1/verify', {
        creds: zero,
        body: { phone_number: '+79993330032', method: 'reverse_flash_call' },
      });
      expect(res.status).toBe(402);
      expect(res.headers.get('content-type')).toBe('application/problem+json');
      expect(res.body.error_code).toBe('insufficient_balance');

      const low = await account(2.99);
      const sms = await api(sb, 'POST', '/v1/verify', {
        creds: low,
        body: { phone_number: '+79993330032', method: 'sms' },
      });
      expect(sms.status).toBe(402);
      expect(
        (
          await api(sb, 'POST', '/v1/verify', {
            creds: low,
            body: { phone_number: '+79993330032', method: 'flash_call' },
          })
        ).status,
      ).toBe(201);
    });

    it('a deferred charge is applied even past zero; the next initiation then gets 402', async () => {
      const c = await account(3);
      const a = await initiate(sb, '+79993330033', 'sms', c);
      const b = await initiate(sb, '+79993330034', 'sms', c);
      await sb.deliver(a.request_id);
      await sb.deliver(b.request_id);
      expect(await balanceOf(sb, c)).toBe(-3);
      const res = await api(sb, 'POST', '/v1/verify', {
        creds: c,
        body: { phone_number: '+79993330035', method: 'sms' },
      });
      expect(res.status).toBe(402);
      expect((await control(sb, 'GET', `/accounts/${c.apiKey}`)).body.balance).toEqual({
        amount: -3,
        currency: 'RUB',
      });
    });

    it('amounts on the wire have at most 2 decimal places (kopecks inside, no float drift)', async () => {
      const c = await sb.createAccount({ balance: 0.3 });
      const s = await initiate(sb, '+79993330036', 'reverse_flash_call', c);
      await sb.call(s.request_id, '+79993330036');
      expect((await api(sb, 'GET', '/v1/balance', { creds: c })).text).toBe(
        '{"balance":{"amount":0.05,"currency":"RUB"}}',
      );

      const d = await sb.createAccount({ balance: 10 });
      for (let i = 0; i < 3; i++)
        await sb.deliver((await initiate(sb, '+79993330037', 'flash_call', d)).request_id);
      expect((await api(sb, 'GET', '/v1/balance', { creds: d })).text).toBe(
        '{"balance":{"amount":7.6,"currency":"RUB"}}',
      );
    });
  });
});

/** `POST /_sandbox/sessions/:id/recalculate`: the service's recalculation of a charged session (spec, 2026-09-21). */
describe('sandbox recalculation', () => {
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0 });
  });
  afterAll(async () => {
    await sb.close();
  });

  const usageCost = async (c: Creds): Promise<number> => {
    const today = new Date(sb.now()).toISOString().slice(0, 10);
    const res = await api(sb, 'GET', `/v1/usage?from=${today}&to=${today}`, { creds: c });
    return res.body.total_cost.amount as number;
  };

  it('credits the balance and counts the new amount in usage, the session keeps its cost and status', async () => {
    const c = await sb.createAccount({ balance: 100 });
    const s = await initiate(sb, '+79993331001', 'sms', c);
    await sb.deliver(s.request_id);
    expect([await balanceOf(sb, c), await usageCost(c)]).toEqual([97, 3]);
    const res = await control(sb, 'POST', `/sessions/${s.request_id}/recalculate`, { amount: 0 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ result: 'recalculated', status: 'delivered', cost: { amount: 3 } });
    expect([await balanceOf(sb, c), await usageCost(c)]).toEqual([100, 0]);
  });

  it('debits more when recalculated above the cost; the same amount again changes nothing', async () => {
    const c = await sb.createAccount({ balance: 100 });
    const s = await initiate(sb, '+79993331002', 'msgr1_otp', c);
    expect(await balanceOf(sb, c)).toBe(99.1);
    await sb.recalculate(s.request_id, 1.5);
    await sb.recalculate(s.request_id, 1.5);
    expect([await balanceOf(sb, c), await usageCost(c)]).toEqual([98.5, 1.5]);
  });

  it('refuses a bad amount (400) and a session nothing was charged for (409), changing nothing', async () => {
    const c = await sb.createAccount({ balance: 100 });
    const s = await initiate(sb, '+79993331003', 'sms', c);
    for (const amount of [-1, 0.001, '1', null, undefined]) {
      const res = await control(sb, 'POST', `/sessions/${s.request_id}/recalculate`, { amount });
      expect({ amount, status: res.status, code: res.body.error_code }).toEqual({
        amount,
        status: 400,
        code: 'validation_error',
      });
    }
    const notCharged = await control(sb, 'POST', `/sessions/${s.request_id}/recalculate`, { amount: 0 });
    expect([notCharged.status, notCharged.body.error_code]).toEqual([409, 'not_applicable']);
    const unknown = await control(sb, 'POST', '/sessions/00000000-0000-4000-8000-000000000000/recalculate', {
      amount: 0,
    });
    expect(unknown.status).toBe(404);
    expect([await balanceOf(sb, c), await usageCost(c)]).toEqual([100, 0]);
  });
});
