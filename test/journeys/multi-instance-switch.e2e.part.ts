/**
 * Two instances of one deployment on one Redis switching the same journey at once: one switch
 * wins (201), the other is told a switch is under way (409 `switch_in_progress`, Retry-After: 1),
 * and the API is asked for exactly one new session: no double charge.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import {
  startInstance,
  uniqueKeyPrefix,
  type Instance,
  type StoreWiring,
} from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS } from '../support/verification-app.js';
import {
  cancel,
  freshPhone,
  OWNER,
  problem,
  sessionIds,
  start,
  status,
  switchMethod,
} from './journey-host.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const POSTS = 'POST /v1/verify';

describe.each(PLATFORMS)('journeys: two instances on Redis (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;

  beforeAll(async () => {
    sb = suite.sb;
  });

  async function deployment(wirings: [StoreWiring, StoreWiring]): Promise<[Instance, Instance]> {
    const keyPrefix = uniqueKeyPrefix('journeys');
    const common = { platform, redisUrl: sharedRedisUrl(), keyPrefix };
    const a = await startInstance(sb, 'A', { ...common, wiring: wirings[0] });
    const b = await startInstance(sb, 'B', { ...common, wiring: wirings[1] });
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${a.url}/verification/webhooks` });
    return [a, b];
  }

  it('switching the same journey on both at once: one 201, one 409 switch_in_progress, one upstream POST', async () => {
    const [a, b] = await deployment(['store-ioredis-url', 'host-node-redis']);
    try {
      const phone = freshPhone();
      const first = await start(a, { phone_number: phone, method: 'sms' });
      const id = first.body.verification_id;
      const posts = sb.requestCount(POSTS);
      // The winner's upstream call takes a moment, as a real one does: the loser arrives meanwhile.
      sb.addFault({ route: POSTS, kind: 'latency', latency_ms: 400, count: 1 });
      const answers = await Promise.all([switchMethod(a, id), switchMethod(b, id)]);
      expect(answers.map((res) => res.status).sort()).toEqual([201, 409]);
      const lost = answers.find((res) => res.status === 409)!;
      expect(problem(lost)).toEqual({ status: 409, error_code: 'switch_in_progress', retry_after: '1' });
      expect(sb.requestCount(POSTS) - posts).toBe(1);
      expect(sessionIds(sb, phone)).toHaveLength(2);
      // Both instances tell the same journey.
      for (const instance of [a, b])
        expect((await status(instance, id)).body).toMatchObject({
          method: 'reverse_flash_call',
          methods_tried: ['sms', 'reverse_flash_call'],
        });
      // The loser's retry (after its Retry-After) is a switch of its own, to the next method.
      const retried = await switchMethod(b, id);
      expect(retried.body.method).toBe('flash_call');
      expect(sb.requestCount(POSTS) - posts).toBe(2);
      // A cancel on A ends the journey for B too.
      expect((await cancel(a, id)).status).toBe(200);
      expect((await status(b, id, OWNER)).body.status).toBe('canceled');
      expect(problem(await switchMethod(b, id))).toMatchObject({ status: 409, error_code: 'not_pending' });
    } finally {
      await b.shutdown();
      await a.shutdown();
    }
  });
});
