import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  isKnownInitiateResult,
  VerificationApiClient,
  VerificationApiError,
  type InitiateResult,
  type KnownVerificationMethod,
} from '../../src/index.js';
import { SandboxControlClient, VerificationSandbox } from '../../src/testing/index.js';
import { API_TRANSPORTS, issued, issuedCode, nextPhone } from './sandbox-control.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

describe.each(API_TRANSPORTS)(
  'VerificationApiClient against the sandbox: every operation, every method (transport: %s)',
  (transport) => {
    // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
    afterAll(async () => {
      client.close();
    });
    const suite = sandboxSuite({ freezeClock: false });
    let sb: VerificationSandbox;
    let client: VerificationApiClient;

    beforeAll(async () => {
      sb = suite.sb;
      client = VerificationApiClient.create({
        transport,
        baseUrl: sb.url,
        apiKey: sb.demoAccount.apiKey,
        apiSecret: sb.demoAccount.apiSecret,
      });
    });

    function expectCommon(result: InitiateResult, phone: string, method: KnownVerificationMethod): void {
      expect(result.method).toBe(method);
      expect(result.requestId).toMatch(GUID);
      expect(result.phoneNumber).toBe(phone);
      expect(result.status).toBe('sent');
      expect(result.cost).toEqual({ amount: expect.any(Number), currency: 'RUB' });
      expect(result.expiresAt).toBeInstanceOf(Date);
      expect(result.expiresAt!.getTime()).toBeGreaterThan(sb.now());
    }

    async function expectVerified(requestId: string, phone: string): Promise<void> {
      const session = await client.getSession(requestId);
      expect(session.status).toBe('verified');
      expect(session.phoneNumber).toBe(phone);
      expect(session.verifiedAt).toBeInstanceOf(Date);
      expect(session.createdAt).toBeInstanceOf(Date);
    }

    it.each(['sms', 'flash_call', 'msgr1_otp'] as const)(
      '%s: initiate, getSession, deliver, check → verified',
      async (method) => {
        const phone = nextPhone();
        const started = await client.initiate({ phoneNumber: phone, method, expirySeconds: 120 });
        expectCommon(started, phone, method);
        expect(started.codeLength).toBe(issued(sb, started.requestId).code_length);
        expect(started.expiresAt!.getTime() - sb.now()).toBeLessThanOrEqual(120_000);

        const pending = await client.getSession(started.requestId);
        expect(pending).toMatchObject({
          requestId: started.requestId,
          method,
          status: 'sent',
          verifiedAt: null,
          cost: started.cost,
        });

        await new SandboxControlClient(sb.url).deliver(started.requestId);
        expect((await client.getSession(started.requestId)).status).toBe('delivered');

        const code = issuedCode(sb, started.requestId);
        const checked = await client.check({ requestId: started.requestId, code });
        expect(checked).toEqual({ requestId: started.requestId, status: 'verified', phoneNumber: phone });
        await expectVerified(started.requestId, phone);
      },
    );

    it('msgr1_otp: the wire name msgr1 is normalised in the initiate discriminator and the session', async () => {
      const started = await client.initiate({ phoneNumber: nextPhone(), method: 'msgr1_otp' });
      expect(started.method).toBe('msgr1_otp');
      expect(issued(sb, started.requestId).method).toBe('msgr1_otp');
      expect((await client.getSession(started.requestId)).method).toBe('msgr1_otp');
    });

    it('reverse_flash_call: initiate shows the number to call; the call verifies without a check', async () => {
      const phone = nextPhone();
      const started = await client.initiate({ phoneNumber: phone, method: 'reverse_flash_call' });
      expectCommon(started, phone, 'reverse_flash_call');
      if (!isKnownInitiateResult(started) || started.method !== 'reverse_flash_call')
        throw new Error('variant');
      expect(started.numberToCall).toMatch(/^\+7\d{10}$/);
      expect(started.numberToCall).toBe(issued(sb, started.requestId).number_to_call);

      await new SandboxControlClient(sb.url).call(started.requestId, phone);
      await expectVerified(started.requestId, phone);
    });

    it('msgr2_bot: deep link, share → delivered awaiting a code, check → verified', async () => {
      const phone = nextPhone();
      const started = await client.initiate({ phoneNumber: phone, method: 'msgr2_bot' });
      expectCommon(started, phone, 'msgr2_bot');
      if (!isKnownInitiateResult(started) || started.method !== 'msgr2_bot') throw new Error('variant');
      expect(started.deepLink).toBe(issued(sb, started.requestId).deep_link);
      expect(started.deepLink).toContain('?start=');

      await new SandboxControlClient(sb.url).share(started.requestId, phone);
      const delivered = await client.getSession(started.requestId);
      expect(delivered).toMatchObject({ status: 'delivered', awaitingCode: true });

      const code = issuedCode(sb, started.requestId);
      expect(await client.check({ requestId: started.requestId, code })).toMatchObject({
        status: 'verified',
      });
      await expectVerified(started.requestId, phone);
    });

    it('operator_id: push pending, SMS fallback, accepted code answers sent, then verified', async () => {
      const phone = nextPhone();
      const started = await client.initiate({ phoneNumber: phone, method: 'operator_id' });
      expectCommon(started, phone, 'operator_id');
      if (!isKnownInitiateResult(started) || started.method !== 'operator_id') throw new Error('variant');
      expect(started.awaitingCode).toBe(false);

      await new SandboxControlClient(sb.url).operator(started.requestId, 'fallback');
      expect(await client.getSession(started.requestId)).toMatchObject({
        status: 'sent',
        awaitingCode: true,
      });

      const code = issuedCode(sb, started.requestId);
      expect(await client.check({ requestId: started.requestId, code })).toEqual({
        requestId: started.requestId,
        status: 'sent',
        phoneNumber: phone,
      });
      await sb.advance(2000);
      await expectVerified(started.requestId, phone);
    });

    it('getSession encodes the request id as one path segment', async () => {
      const before = sb.requestCount('GET /v1/balance');
      const error = await client.getSession('../balance').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VerificationApiError);
      expect([400, 404]).toContain((error as VerificationApiError).status);
      expect(sb.requestCount('GET /v1/balance')).toBe(before);
    });

    it('getBalance keeps Money and follows the charges', async () => {
      const before = await client.getBalance();
      expect(before).toEqual({ balance: { amount: expect.any(Number), currency: 'RUB' } });
      // msgr1_otp is charged per attempt, at initiation.
      const started = await client.initiate({ phoneNumber: nextPhone(), method: 'msgr1_otp' });
      const after = await client.getBalance();
      expect(after.balance.amount).toBeCloseTo(before.balance.amount - started.cost!.amount, 2);
    });

    it('getUsage: default range and an explicit one, by_method keyed by canonical names', async () => {
      // A fresh account, so the counts are exactly this test's sessions.
      const creds = await sb.createAccount({});
      const own = VerificationApiClient.create({
        transport,
        baseUrl: sb.url,
        ...creds,
      });
      try {
        const methods = ['msgr1_otp', 'msgr1_otp', 'sms', 'reverse_flash_call'] as const;
        const started = [];
        for (const method of methods) started.push(await own.initiate({ phoneNumber: nextPhone(), method }));
        await new SandboxControlClient(sb.url).deliver(started[2].requestId);
        await own.check({ requestId: started[2].requestId, code: issuedCode(sb, started[2].requestId) });

        const usage = await own.getUsage();
        expect(usage.from).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(usage.to).toMatch(/^\d{4}-\d{2}-\d{2}$/);
        expect(usage).toMatchObject({
          totalVerifications: 4,
          successful: 1,
          successRate: 0.25,
          byMethod: { msgr1_otp: 2, sms: 1, reverse_flash_call: 1 },
          byStatus: { sent: 3, verified: 1 },
        });
        expect(usage.byMethod).not.toHaveProperty('msgr1');
        const charged = started[0].cost!.amount + started[1].cost!.amount + started[2].cost!.amount;
        expect(usage.totalCost.currency).toBe('RUB');
        expect(usage.totalCost.amount).toBeCloseTo(charged, 2);
        expect(usage.daily.reduce((sum, d) => sum + d.total, 0)).toBe(4);

        const today = new Date(sb.now());
        const ranged = await own.getUsage({ from: today, to: today.toISOString().slice(0, 10) });
        expect(ranged.from).toBe(today.toISOString().slice(0, 10));
        expect(ranged.to).toBe(ranged.from);
        expect(ranged.totalVerifications).toBe(4);

        const past = await own.getUsage({ from: '2020-01-01', to: '2020-01-31' });
        expect(past.totalVerifications).toBe(0);
        expect(past.daily).toEqual([]);
      } finally {
        own.close();
      }
    });

    it('getPrices: every available method, msgr1 normalised, Money kept', async () => {
      const { prices } = await client.getPrices();
      const byMethod = Object.fromEntries(prices.map((p) => [p.method, p.price]));
      expect(byMethod.sms).toEqual({ amount: 3, currency: 'RUB' });
      expect(byMethod.reverse_flash_call).toEqual({ amount: 0.25, currency: 'RUB' });
      expect(byMethod.msgr1_otp).toEqual({ amount: 0.9, currency: 'RUB' });
      expect(Object.keys(byMethod)).not.toContain('msgr1');
      for (const m of ['flash_call', 'msgr2_bot', 'operator_id']) {
        expect(byMethod[m]).toEqual({ amount: expect.any(Number), currency: 'RUB' });
      }
    });

    it('getPrices reads the map shape too', async () => {
      const mapSb = await VerificationSandbox.start({ port: 0, pricesShape: 'map' });
      const mapClient = VerificationApiClient.create({
        transport,
        baseUrl: mapSb.url,
        apiKey: mapSb.demoAccount.apiKey,
        apiSecret: mapSb.demoAccount.apiSecret,
      });
      try {
        const { prices } = await mapClient.getPrices();
        expect(prices).toContainEqual({ method: 'sms', price: { amount: 3, currency: 'RUB' } });
        expect(prices).toContainEqual({ method: 'msgr1_otp', price: { amount: 0.9, currency: 'RUB' } });
        expect(prices.length).toBeGreaterThanOrEqual(6);
      } finally {
        mapClient.close();
        await mapSb.close();
      }
    });

    it('keeps the path of a base address (an API gateway prefix) and the query string', async () => {
      const seen: string[] = [];
      const gateway = http.createServer((req, res) => {
        seen.push(req.url ?? '');
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            balance: { amount: 12.5, currency: 'RUB' },
            total: 0,
            by_method: {},
            by_status: {},
          }),
        );
      });
      await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
      const { port } = gateway.address() as { port: number };
      const viaGateway = VerificationApiClient.create({
        transport,
        baseUrl: `http://127.0.0.1:${port}/gateway/verification/`,
        apiKey: 'key',
        apiSecret: 'secret',
      });
      try {
        expect((await viaGateway.getBalance()).balance).toEqual({ amount: 12.5, currency: 'RUB' });
        await viaGateway.getUsage({ from: '2026-11-01' }).catch(() => undefined);
        expect(seen[0]).toBe('/gateway/verification/v1/balance');
        expect(seen[1]).toMatch(/^\/gateway\/verification\/v1\/usage\?from=2026-11-01$/);
      } finally {
        viaGateway.close();
        await new Promise((resolve) => gateway.close(resolve));
      }
    });
  },
);
