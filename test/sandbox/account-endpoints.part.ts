import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { api } from './sandbox-client.js';

/** GET /v1/balance, GET /v1/prices and GET /dashboard/prices in both configurable shapes. */
describe('sandbox balance and prices', () => {
  let sb: VerificationSandbox;
  let mapped: VerificationSandbox;

  beforeAll(async () => {
    sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 42.5 } });
    mapped = await VerificationSandbox.start({ port: 0, pricesShape: 'map' });
  });
  afterAll(async () => {
    await sb.close();
    await mapped.close();
  });

  it('balance is Money in RUB', async () => {
    const res = await api(sb, 'GET', '/v1/balance');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.body).toEqual({ balance: { amount: 42.5, currency: 'RUB' } });
  });

  it.each(['/v1/prices', '/dashboard/prices'])(
    '%s lists the client prices of enabled methods (default list shape)',
    async (path) => {
      const res = await api(sb, 'GET', path);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({
        currency: 'RUB',
        prices: [
          { method: 'reverse_flash_call', price: { amount: 0.25, currency: 'RUB' } },
          { method: 'flash_call', price: { amount: 0.8, currency: 'RUB' } },
          { method: 'msgr1_otp', price: { amount: 0.9, currency: 'RUB' } },
          { method: 'msgr2_bot', price: { amount: 1, currency: 'RUB' } },
          { method: 'sms', price: { amount: 3, currency: 'RUB' } },
          { method: 'operator_id', price: { amount: 2, currency: 'RUB' } },
        ],
      });
    },
  );

  it('follows the account: per-account msgr2_bot rate, only enabled methods', async () => {
    const c = await sb.createAccount({ enabledMethods: ['sms', 'msgr2_bot'], prices: { msgr2_bot: 1.7 } });
    const res = await api(sb, 'GET', '/v1/prices', { creds: c });
    expect(res.body.prices).toEqual([
      { method: 'msgr2_bot', price: { amount: 1.7, currency: 'RUB' } },
      { method: 'sms', price: { amount: 3, currency: 'RUB' } },
    ]);
  });

  it.each(['/v1/prices', '/dashboard/prices'])('%s in the map shape', async (path) => {
    const res = await api(mapped, 'GET', path);
    expect(res.body.currency).toBe('RUB');
    expect(res.body.prices.sms).toEqual({ amount: 3, currency: 'RUB' });
    expect(res.body.prices.reverse_flash_call).toEqual({ amount: 0.25, currency: 'RUB' });
    expect(Object.keys(res.body.prices)).toHaveLength(6);
  });
});
