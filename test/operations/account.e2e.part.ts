import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { CapturingLogger } from '../support/log-capture.js';
import type { TestApp } from '../support/verification-app.js';
import { bootHost } from './support/ops-host.js';

describe('VerificationAccountService: balance, usage and prices', () => {
  let sb: VerificationSandbox | undefined;
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    await sb?.close();
    host = sb = undefined;
  });

  async function boot(
    sandbox: Parameters<typeof VerificationSandbox.start>[0] = {},
    module: Parameters<typeof bootHost>[0]['module'] = {},
    logger?: CapturingLogger,
  ) {
    sb = await VerificationSandbox.start({ port: 0, ...sandbox });
    host = await bootHost({ sb, module, logger });
    return { sb, account: host.app.get(VerificationAccountService) };
  }

  it('reads the balance from the API every time', async () => {
    const { sb, account } = await boot({ demoAccount: { balance: 123.45 } });
    expect(await account.getBalance()).toEqual({ amount: 123.45, currency: 'RUB' });
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 7 });
    expect(await account.getBalance()).toEqual({ amount: 7, currency: 'RUB' });
    expect(sb.requestCount('GET /v1/balance')).toBe(2);
  });

  it('shares one balance request between concurrent callers', async () => {
    const { sb, account } = await boot();
    const amounts = await Promise.all([account.getBalance(), account.getBalance(), account.getBalance()]);
    expect(amounts.map((m) => m.amount)).toEqual([1000, 1000, 1000]);
    expect(sb.requestCount('GET /v1/balance')).toBe(1);
  });

  it('reads usage with canonical method keys (msgr1 on the wire is msgr1_otp) over a date range', async () => {
    const { sb, account } = await boot();
    for (const [phone, method] of [
      ['+79123450101', 'msgr1_otp'],
      ['+79123450102', 'sms'],
      ['+79123450103', 'sms'],
    ] as const) {
      const res = await fetch(`${host!.url}/verification/start`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ phone_number: phone, method }),
      });
      expect(res.status).toBe(201);
    }
    const today = new Date(sb.now()).toISOString().slice(0, 10);
    const usage = await account.getUsage({ from: today, to: new Date(sb.now()) });
    expect(usage).toMatchObject({ from: today, to: today, totalVerifications: 3 });
    expect(usage.byMethod).toEqual({ msgr1_otp: 1, sms: 2 });
    const yesterday = new Date(sb.now() - 86_400_000).toISOString().slice(0, 10);
    expect((await account.getUsage({ from: yesterday, to: yesterday })).totalVerifications).toBe(0);
    // From a day on, with no end: through the API's default end (today), not that day alone.
    expect(await account.getUsage({ from: yesterday })).toMatchObject({ totalVerifications: 3 });
  });

  it('refuses a malformed or inverted date range before asking the API', async () => {
    const { sb, account } = await boot();
    await expect(account.getUsage({ from: '2026-02-31' })).rejects.toThrow(
      'getUsage: "from" is not a calendar date',
    );
    await expect(account.getUsage({ to: '31.01.2026' })).rejects.toThrow('"to" must be a date');
    await expect(account.getUsage({ from: new Date('nope') })).rejects.toThrow('invalid Date');
    await expect(account.getUsage({ from: '2026-03-02', to: '2026-03-01' })).rejects.toThrow(
      '"from" (2026-03-02) is after "to" (2026-03-01)',
    );
    expect(sb.requestCount('GET /v1/usage')).toBe(0);
  });

  it('caches prices for 10 minutes by default, on the module clock', async () => {
    // A frozen clock moves only when told: the boundary is exact to the millisecond.
    const { sb, account } = await boot({ freezeClock: true });
    expect(await account.estimateCost('sms')).toEqual({ amount: 3, currency: 'RUB' });
    await sb.updateAccount(sb.demoAccount.apiKey, { prices: { sms: 4.5 } });
    await sb.advance(599_999);
    expect(await account.estimateCost('sms')).toEqual({ amount: 3, currency: 'RUB' });
    expect(sb.requestCount('GET /v1/prices')).toBe(1);
    await sb.advance(1);
    expect(await account.estimateCost('sms')).toEqual({ amount: 4.5, currency: 'RUB' });
    expect(sb.requestCount('GET /v1/prices')).toBe(2);
  });

  it('honours pricesTtlMs and reads once for concurrent callers', async () => {
    const { sb, account } = await boot({ freezeClock: true }, { pricesTtlMs: 30_000 });
    await Promise.all([account.getPrices(), account.getPrices(), account.estimateCost('flash_call')]);
    expect(sb.requestCount('GET /v1/prices')).toBe(1);
    await sb.advance(29_999);
    await account.getPrices();
    expect(sb.requestCount('GET /v1/prices')).toBe(1);
    await sb.advance(1);
    await account.getPrices();
    expect(sb.requestCount('GET /v1/prices')).toBe(2);
  });

  it('cachedPrices: the list getPrices holds while it is younger than pricesTtlMs, never asking the API', async () => {
    const { sb, account } = await boot({ freezeClock: true }, { pricesTtlMs: 30_000 });
    expect(account.cachedPrices()).toBeUndefined();
    const read = await account.getPrices();
    await sb.advance(29_999);
    expect(account.cachedPrices()).toEqual(read);
    expect(read.prices.find((p) => p.method === 'sms')?.price).toEqual({ amount: 3, currency: 'RUB' });
    await sb.advance(1);
    expect(account.cachedPrices()).toBeUndefined();
    expect(sb.requestCount('GET /v1/prices')).toBe(1);
  });

  it('estimates from the account’s own prices, in either response shape; null for a method without a price', async () => {
    const { account } = await boot({
      pricesShape: 'map',
      demoAccount: {
        prices: { msgr2_bot: 1.5, msgr1_otp: 0.95 },
        enabledMethods: ['sms', 'msgr1', 'msgr2_bot', 'reverse_flash_call'],
      },
    });
    expect(await account.estimateCost('msgr2_bot')).toEqual({ amount: 1.5, currency: 'RUB' });
    expect(await account.estimateCost('msgr1')).toEqual({ amount: 0.95, currency: 'RUB' });
    expect(await account.estimateCost('reverse_flash_call')).toEqual({ amount: 0.25, currency: 'RUB' });
    expect(await account.estimateCost('operator_id')).toBeNull();
    // An estimate is the caller's own: changing it changes no later estimate.
    const mine = await account.estimateCost('msgr2_bot');
    mine!.amount = 0;
    mine!.currency = 'USD';
    expect(await account.estimateCost('msgr2_bot')).toEqual({ amount: 1.5, currency: 'RUB' });
    const { prices } = await account.getPrices();
    expect(prices.map((p) => p.method).sort()).toEqual([
      'msgr1_otp',
      'msgr2_bot',
      'reverse_flash_call',
      'sms',
    ]);
  });

  it('serves the last prices when a refresh fails (and says so in the log); fails when it never had any', async () => {
    const logger = new CapturingLogger();
    const { sb, account } = await boot({}, { pricesTtlMs: 60_000 }, logger);
    sb.addFault({ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 });
    await expect(account.getPrices()).rejects.toMatchObject({ name: 'VerificationApiError', status: 500 });
    sb.clearFaults();
    expect(await account.estimateCost('sms')).toEqual({ amount: 3, currency: 'RUB' });
    await sb.advance(60_000);
    sb.addFault({ route: 'GET /v1/prices', kind: 'html', count: 0 });
    expect(await account.estimateCost('sms')).toEqual({ amount: 3, currency: 'RUB' });
    expect(
      logger.lines.filter((l) =>
        l.includes('prices could not be read; the last list read stands until they can'),
      ),
    ).toHaveLength(2); // once per failed read: the first (no list yet, the call rejects) and the refresh
    sb.clearFaults();
    // The failed refresh did not reset the age: the next call tries again and succeeds.
    await sb.updateAccount(sb.demoAccount.apiKey, { prices: { sms: 2 } });
    expect(await account.estimateCost('sms')).toEqual({ amount: 2, currency: 'RUB' });
  });
});
