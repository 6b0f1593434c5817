/**
 * Issue 47: a step a journey switched away from ends in the method figures when a later step verifies
 * the journey (a real user its method failed, known then, not at its expiry 300 s on), and a user who
 * switched to a paid step a page followed and never verified counts against the step left. Over HTTP,
 * on Express and Fastify, with the module's own figures.
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  check,
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
  switchMethod,
} from './journey-host.js';

describe.each(PLATFORMS)('journeys: the ends of the steps switched away from (%s)', (platform) => {
  const fx = journeyFixture();

  it.each([
    {
      title: 'a journey verified by its SMS ends the reverse call it left then: ended, not verified',
      async end(host: TestApp, id: string, phone: string, stats: MethodStats) {
        const [callId, smsId] = sessionIds(fx.sb, phone);
        await fx.sb.advance(15_000);
        expect((await check(host, id, String(fx.sb.getSession(smsId!)!.code))).body.verified).toBe(true);
        // Long before the call's expiry: the users the call did not verify, for its moment and ranking.
        expect(await stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 1 });
        expect(fx.sb.getSession(callId!)!.status).not.toBe('expired');
      },
    },
    {
      title:
        'a user who switched to a paid step a page followed, and never verified, counts against the call left',
      // The page follows the SMS step, then the user leaves. Proven (the journey's paid step followed),
      // not rescued: a real user the call failed.
      async end(host: TestApp, id: string) {
        await fx.sb.advance(10_000);
        expect((await status(host, id)).status).toBe(200);
        await fx.sb.advance(600_000);
        await status(host, id);
      },
    },
  ])('$title', async ({ end }) => {
    const host = await journeyHost(fx, platform);
    const stats = host.app.get(MethodStats, { strict: false });
    const phone = freshPhone();
    const first = await start(host, { phone_number: phone, method: 'reverse_flash_call', device: 'mobile' });
    const id = first.body.verification_id as string;
    await fx.sb.advance(20_000);
    expect((await switchMethod(host, id, 'sms')).status).toBe(201);
    await end(host, id, phone, stats);
    expect((await stats.figures()).reverse_flash_call).toMatchObject({ started: 1, expired: 1 });
    expect((await stats.learningSamples()).reverse_flash_call).toMatchObject({ started: 1, verified: 0 });
  });
});
