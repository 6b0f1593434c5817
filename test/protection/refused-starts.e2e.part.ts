import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationSandbox } from '../../src/testing/index.js';
import { ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { freshIp, freshPhone, protectedHost, refusal, startFrom } from './protection-host.js';

const HOUR = 3_600_000;

/**
 * A start the API refused sent nothing (a method the account has not enabled, a problem document,
 * a refused connection): it must cost nobody any budget. Before, each one kept its per-phone point,
 * so a handful of refused starts locked a number out for an hour without a single SMS.
 */
describe.each(ONE_PLATFORM)('starts the API refused cost no budget (%s)', (platform) => {
  // Only sms is enabled; the two sandboxes answer another method with 403 (no body) and 400.
  const sandboxes: Record<'403' | '400', VerificationSandbox> = {} as never;
  let host: TestApp | undefined;

  beforeAll(async () => {
    for (const answer of [403, 400] as const)
      sandboxes[answer] = await VerificationSandbox.start({
        port: 0,
        demoAccount: { balance: 100_000, enabledMethods: ['sms'] },
        methodNotEnabled: answer,
      });
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
    for (const sb of Object.values(sandboxes)) sb.clearFaults();
  });
  afterAll(async () => {
    for (const sb of Object.values(sandboxes)) await sb.close();
  });

  it.each(['403', '400'] as const)(
    'twenty starts of a method the account has not enabled (API answers %s) take no per-IP, per-phone, per-caller, cooldown or spend point',
    async (answer) => {
      const sb = sandboxes[answer];
      host = await protectedHost(
        sb,
        platform,
        {
          startPerIp: { points: 3, windowMs: HOUR },
          startPerPhoneAndCaller: { points: 2, windowMs: HOUR },
          startPerPhone: { points: 2, windowMs: HOUR },
          // Room for exactly two SMS (3.00 RUB each in the sandbox).
          spendCap: { amount: 6, windowMs: 86_400_000 },
          // The cap to the kopeck: the pumping defence would keep its last share for methods charged on proof.
          pumping: false,
        },
        // Offered explicitly, so the start reaches the API (by default the module offers only what
        // the account's price list names, and would refuse flash_call itself).
        { methods: ['sms', 'flash_call'] },
      );
      const ip = freshIp();
      const phone = freshPhone();
      for (let i = 0; i < 20; i++) {
        const refused = await startFrom(host, ip, phone, 'flash_call');
        expect(refused.status).toBe(answer === '403' ? 503 : 400);
        expect(String(refused.body.reason ?? '')).not.toMatch(/limit|cooldown|spend/);
      }
      expect(sb.sessionsFor(phone)).toHaveLength(0);

      // Every budget is whole: the number's two starts (no cooldown left behind), then the IP's third.
      expect((await startFrom(host, ip, phone, 'sms')).status).toBe(201);
      await sb.advance(60_000);
      expect((await startFrom(host, ip, phone, 'sms')).status).toBe(201);
      await sb.advance(60_000);
      expect(refusal(await startFrom(host, ip, phone, 'sms')).reason).toBe('start_phone_caller_limit');
      const third = await startFrom(host, ip, freshPhone(), 'sms');
      expect(refusal(third).reason).toBe('spend_cap');
      expect(sb.sessionsFor(phone)).toHaveLength(2);
    },
  );

  it('an upstream problem document (500, 429) gives every point back; an unknown outcome (reset) keeps them', async () => {
    const sb = sandboxes['403'];
    host = await protectedHost(sb, platform, {
      startPerIp: { points: 2, windowMs: HOUR },
      startPerPhoneAndCaller: { points: 1, windowMs: HOUR },
    });
    const ip = freshIp();
    const phone = freshPhone();
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 500, count: 3 });
    for (let i = 0; i < 3; i++) expect((await startFrom(host, ip, phone)).status).toBe(503);
    sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 429, retry_after_s: 1, count: 3 });
    // Each waits out the Retry-After (the module holds starts back meanwhile), so each reaches the API.
    for (let i = 0; i < 3; i++) {
      expect((await startFrom(host, ip, phone)).status).toBe(429);
      await sb.advance(1_000);
    }
    expect((await startFrom(host, ip, phone)).status).toBe(201);

    // The SMS may have gone out: the caller's points stay counted.
    const other = freshPhone();
    sb.addFault({ route: 'POST /v1/verify', kind: 'reset' });
    expect((await startFrom(host, ip, other)).status).toBe(503);
    // This account offers no method charged on proof, so past the per-address limit it is refused.
    expect(refusal(await startFrom(host, ip, freshPhone())).reason).toBe('start_ip_limit');
  });
});
