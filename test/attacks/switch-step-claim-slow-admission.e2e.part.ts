/**
 * Attack (attack-228): a switch's step claim (longestCallMs(POST) + 30 s, a minute at least) is taken before the
 * switch's admission, which runs the host's hooks (and the spend cap's own API reads) before the POST. A
 * `beforeStart` slower than the claim let a second switch of the journey take the lapsed claim and pay; the
 * first, its hook back, paid too: two switches paid for one step.
 *
 * Expected: one switch of the step pays; the one whose claim another took meanwhile is 409 switch_in_progress.
 */
import { describe, expect, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  problem,
  sessionIds,
  start,
  switchMethod,
} from '../journeys/journey-host.js';

const POSTS = 'POST /v1/verify';

describe('journeys: a switch whose admission outlives its step claim', () => {
  const fx = journeyFixture();
  const platform = PLATFORMS[0]!;

  it('a beforeStart 61 s long: the second switch pays, the first is 409 switch_in_progress, one POST, its count given back', async () => {
    let calls = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let hanging!: () => void;
    const hung = new Promise<void>((resolve) => (hanging = resolve));
    // The start's check answers at once; the first switch's hangs; the second switch's answers at once.
    const beforeStart = async (): Promise<boolean> => {
      calls += 1;
      if (calls === 2) {
        hanging();
        await held;
      }
      return true;
    };
    try {
      // Three starts an hour from this address: the start, the switch that paid and one more.
      const startPerIp = { points: 3, windowMs: 3_600_000 };
      const host = await journeyHost(fx, platform, {
        limits: { beforeStart, resendCooldownMs: false, startPerIp },
      });
      const phone = freshPhone();
      const id = (await start(host, { phone_number: phone, method: 'sms' })).body.verification_id;
      const posts = fx.sb.requestCount(POSTS);
      const first = switchMethod(host, id, 'flash_call');
      await hung;
      // Past the step claim's minute (the defaults: 15 s + 30 s, a minute at least).
      await fx.sb.advance(61_000);
      const second = await switchMethod(host, id, 'flash_call');
      expect(second.status).toBe(201);
      release();
      expect(problem(await first)).toMatchObject({ status: 409, error_code: 'switch_in_progress' });
      expect(fx.sb.requestCount(POSTS) - posts).toBe(1);
      expect(sessionIds(fx.sb, phone)).toHaveLength(2);
      // The refused switch sent nothing: the address's start it counted is given back.
      expect((await start(host, { phone_number: freshPhone(), method: 'sms' })).status).toBe(201);
    } finally {
      release();
    }
  });
});
