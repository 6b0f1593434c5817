import { afterEach, describe, expect, it, jest } from '@jest/globals';
import type { BalanceEvent } from '../../src/core/verification-events.js';
import { VerificationBalanceWatch } from '../../src/account/balance-watch.service.js';
import { MemoryStore } from '../../src/store/index.js';
import { VerificationSandbox } from '../../src/testing/index.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { bootHost, waitFor } from './support/ops-host.js';

/** An interval no test reaches: reads happen at boot and through checkNow(). */
const NEVER_MS = 3_600_000;

function balanceEvents(host: TestApp, name: string): BalanceEvent[] {
  return host.opsEvents.filter((e) => e.name === name).map((e) => e.payload as BalanceEvent);
}

describe('balance watch', () => {
  let sb: VerificationSandbox | undefined;
  const hosts: TestApp[] = [];
  afterEach(async () => {
    for (const host of hosts.splice(0)) await host.close();
    await sb?.close();
    sb = undefined;
    jest.restoreAllMocks();
  });

  async function boot(module: Parameters<typeof bootHost>[0]['module'], balance = 1000) {
    sb ??= await VerificationSandbox.start({ port: 0, demoAccount: { balance } });
    const host = await bootHost({ sb, module });
    hosts.push(host);
    return { sb, host, watch: host.app.get(VerificationBalanceWatch) };
  }

  it('emits balance_low once per crossing below the threshold, not per read, re-armed above it', async () => {
    const { sb, host, watch } = await boot({ balanceWatch: { intervalMs: NEVER_MS, threshold: 100 } });
    const setBalance = (balance: number) => sb.updateAccount(sb.demoAccount.apiKey, { balance });
    const lows = () => balanceEvents(host, 'verification.balance_low');

    expect(await watch.checkNow()).toEqual({ amount: 1000, currency: 'RUB', threshold: 100, low: false });
    await setBalance(50);
    expect(await watch.checkNow()).toMatchObject({ amount: 50, low: true });
    expect(lows()).toEqual([
      { event: 'verification.balance_low', amount: 50, currency: 'RUB', threshold: 100 },
    ]);
    await setBalance(40);
    await watch.checkNow();
    await Promise.all([watch.checkNow(), watch.checkNow(), watch.checkNow()]);
    expect(lows()).toHaveLength(1);

    await setBalance(100); // at the threshold is not below it: re-armed
    await watch.checkNow();
    expect(lows()).toHaveLength(1);
    await setBalance(99.99);
    await watch.checkNow();
    await watch.checkNow();
    expect(lows().map((e) => e.amount)).toEqual([50, 99.99]);

    await setBalance(500);
    await watch.checkNow();
    await setBalance(0);
    await watch.checkNow();
    expect(lows().map((e) => e.amount)).toEqual([50, 99.99, 0]);
    expect(balanceEvents(host, 'verification.balance_insufficient')).toEqual([]);
  });

  it('an explicit threshold of 0 is a threshold: a balance below zero is announced once, zero itself is not', async () => {
    const { sb, host, watch } = await boot({ balanceWatch: { intervalMs: NEVER_MS, threshold: 0 } });
    const setBalance = (balance: number) => sb.updateAccount(sb.demoAccount.apiKey, { balance });
    const lows = () => balanceEvents(host, 'verification.balance_low');
    await watch.checkNow();
    await setBalance(0); // low (nothing left), but not below the threshold
    expect(await watch.checkNow()).toEqual({ amount: 0, currency: 'RUB', threshold: 0, low: true });
    expect(lows()).toEqual([]);
    await setBalance(-5);
    await watch.checkNow();
    await watch.checkNow();
    expect(lows()).toEqual([
      { event: 'verification.balance_low', amount: -5, currency: 'RUB', threshold: 0 },
    ]);
    await setBalance(0); // back at the threshold: re-armed
    await watch.checkNow();
    await setBalance(-1);
    await watch.checkNow();
    expect(lows().map((e) => e.amount)).toEqual([-5, -1]);
  });

  it('announces a crossing once across instances that share a store', async () => {
    const store = new MemoryStore();
    const a = await boot({ balanceWatch: { intervalMs: NEVER_MS, threshold: 100 }, store });
    const b = await boot({ balanceWatch: { intervalMs: NEVER_MS, threshold: 100 }, store });
    // Settle both boot reads first: a reading started earlier is applied before, or dropped.
    await Promise.all([a.watch.checkNow(), b.watch.checkNow()]);
    await a.sb.updateAccount(a.sb.demoAccount.apiKey, { balance: 10 });
    await Promise.all([a.watch.checkNow(), b.watch.checkNow(), b.watch.checkNow()]);
    const all = [
      ...balanceEvents(a.host, 'verification.balance_low'),
      ...balanceEvents(b.host, 'verification.balance_low'),
    ];
    // Both hosts listen on their own emitter: the event reached exactly one of them, once.
    expect(all).toEqual([{ event: 'verification.balance_low', amount: 10, currency: 'RUB', threshold: 100 }]);
    await a.sb.updateAccount(a.sb.demoAccount.apiKey, { balance: 200 });
    await b.watch.checkNow();
    await a.sb.updateAccount(a.sb.demoAccount.apiKey, { balance: 20 });
    await a.watch.checkNow();
    expect(balanceEvents(a.host, 'verification.balance_low').map((e) => e.amount)).toContain(20);
    await store.close();
  });

  it('reads on its interval by itself, from boot, and the timer is gone after app.close()', async () => {
    const intervals = jest.spyOn(globalThis, 'setInterval');
    const cleared = jest.spyOn(globalThis, 'clearInterval');
    const { sb, host } = await boot({ balanceWatch: { intervalMs: 25, threshold: 100 } });
    const timer = intervals.mock.results[intervals.mock.calls.findIndex(([, ms]) => ms === 25)]?.value as
      NodeJS.Timeout | undefined;
    expect(timer).toBeDefined();
    expect(timer!.hasRef()).toBe(false);
    await waitFor(() => sb.requestCount('GET /v1/balance') >= 3, 'three interval reads');
    await sb.updateAccount(sb.demoAccount.apiKey, { balance: 60 });
    await waitFor(() => balanceEvents(host, 'verification.balance_low').length === 1, 'balance_low');
    expect(balanceEvents(host, 'verification.balance_low')[0]).toMatchObject({ amount: 60, threshold: 100 });
    expect(cleared.mock.calls.some(([handle]) => handle === timer)).toBe(false);
    await hosts.pop()!.close();
    expect(cleared.mock.calls.some(([handle]) => handle === timer)).toBe(true);
  });

  it('does nothing on its own without balanceWatch', async () => {
    const intervals = jest.spyOn(globalThis, 'setInterval');
    const { sb } = await boot({});
    expect(intervals.mock.calls.filter(([, ms]) => ms === NEVER_MS || ms === 25)).toEqual([]);
    expect(sb.requestCount('GET /v1/balance')).toBe(0);
  });

  describe.each(ONE_PLATFORM)('a 402 on start (%s)', (platform) => {
    it('answers the frontend 503 and emits one balance_insufficient per 402, with the amount', async () => {
      sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 0 } });
      const host = await bootHost({
        sb,
        platform,
        module: { balanceWatch: { intervalMs: NEVER_MS, threshold: 100 } },
      });
      hosts.push(host);
      const res = await call(host.url, 'POST', '/verification/start', {
        phone_number: '+79123450201',
        method: 'sms',
      });
      expect(res.status).toBe(503);
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      expect(res.body).toMatchObject({ error_code: 'service_unavailable' });
      expect(res.text).not.toMatch(/balance|insufficient|402/i);
      expect(balanceEvents(host, 'verification.balance_insufficient')).toEqual([
        { event: 'verification.balance_insufficient', amount: 0, currency: 'RUB', threshold: 100 },
      ]);
      // The read for the event also crossed the threshold: one balance_low (the boot read may have done it first).
      expect(balanceEvents(host, 'verification.balance_low')).toHaveLength(1);

      for (const phone of ['+79123450202', '+79123450203'])
        expect(
          (await call(host.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' }))
            .status,
        ).toBe(503);
      expect(balanceEvents(host, 'verification.balance_insufficient')).toHaveLength(3);
      expect(balanceEvents(host, 'verification.balance_low')).toHaveLength(1);
      expect(sb.requestCount('POST /v1/verify')).toBe(3);
    });
  });

  it('emits balance_insufficient with a null amount when the balance cannot be read either', async () => {
    sb = await VerificationSandbox.start({ port: 0, demoAccount: { balance: 0 } });
    const api = {
      baseUrl: sb.url,
      apiKey: sb.demoAccount.apiKey,
      apiSecret: sb.demoAccount.apiSecret,
      maxRetries: 0,
    };
    const host = await bootHost({ sb, module: { api } });
    hosts.push(host);
    sb.addFault({ route: 'GET /v1/balance', kind: 'status', status: 503, count: 0 });
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: '+79123450204',
      method: 'sms',
    });
    expect(res.status).toBe(503);
    expect(balanceEvents(host, 'verification.balance_insufficient')).toEqual([
      { event: 'verification.balance_insufficient', amount: null, currency: 'RUB', threshold: undefined },
    ]);
  });
});
