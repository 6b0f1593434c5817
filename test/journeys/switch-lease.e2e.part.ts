/**
 * A switch's step claim against a paid start that takes its time: the claim keeps a second switch of the
 * journey out for as long as the first's POST may still land (the API's timeout), not for a fixed minute.
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
} from './journey-host.js';

const POSTS = 'POST /v1/verify';

describe('journeys: a switch whose paid start is slow', () => {
  const fx = journeyFixture();
  // One platform: the claim is the store's, not the HTTP adapter's.
  const platform = PLATFORMS[0]!;

  /**
   * A second switch of one journey `inFlightMs` (module clock) into the first switch's POST, on a host with
   * `api`: it is 409 switch_in_progress and the first one pays, once.
   */
  async function secondSwitchWhileFirstPays(api: Record<string, unknown>, inFlightMs: number) {
    const host = await journeyHost(fx, platform, {
      api: { baseUrl: fx.sb.url, apiKey: '-', apiSecret: '-', ...api },
    });
    const phone = freshPhone();
    const id = (await start(host, { phone_number: phone, method: 'sms' })).body.verification_id;
    const posts = fx.sb.requestCount(POSTS);
    fx.sb.addFault({ route: POSTS, kind: 'latency', latency_ms: 1_500, count: 1 });
    const first = switchMethod(host, id);
    const until = Date.now() + 5000;
    while (fx.sb.requestCount(POSTS) === posts && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await fx.sb.advance(inFlightMs);
    const second = await switchMethod(host, id);
    expect(problem(second)).toMatchObject({ status: 409, error_code: 'switch_in_progress' });
    expect((await first).status).toBe(201);
    expect(fx.sb.requestCount(POSTS) - posts).toBe(1);
    expect(sessionIds(fx.sb, phone)).toHaveLength(2);
  }

  it('with api.timeoutMs 120 s, a second switch while the first’s POST is 61 s in flight is 409 switch_in_progress: one payment, not two', async () => {
    // Well within the POST's 120 s timeout.
    await secondSwitchWhileFirstPays({ maxRetries: 0, timeoutMs: 120_000 }, 61_000);
  });

  it('with retries (timeoutMs 60 s within a 60 s deadline), a second switch 100 s into the first’s POST is 409: a POST retried after a refused connection may land up to 120 s in', async () => {
    // Past timeoutMs + 30 s (the claim before), within retryDeadlineMs + timeoutMs + 30 s.
    await secondSwitchWhileFirstPays({ timeoutMs: 60_000, retryDeadlineMs: 60_000 }, 100_000);
  });
});
