import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { freshIp, freshPhone, refusal } from './protection-host.js';
import { removeTranspiled, startNodeHost, type NodeHost } from './throttler-host/run-in-node.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('the module beside @nestjs/throttler', () => {
  const HOST_MAIN = fileURLToPath(new URL('./throttler-host/host-main.ts', import.meta.url));

  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    await host?.stop();
    removeTranspiled();
  });
  const suite = sandboxSuite({ freezeClock: false, demoAccount: { balance: 100_000 } });
  let sb: VerificationSandbox;
  let host: NodeHost;

  beforeAll(async () => {
    sb = suite.sb;
    host = await startNodeHost(HOST_MAIN, {
      PLATFORMS: PLATFORMS.join(','),
      SANDBOX_URL: sb.url,
      API_KEY: sb.demoAccount.apiKey,
      API_SECRET: sb.demoAccount.apiSecret,
      THROTTLE_LIMIT: '4',
    });
  }, 60_000);

  /**
   * A host that throttles every route with @nestjs/throttler (global ThrottlerGuard, 4 per minute
   * per route and IP) and uses the module's own limits (2 starts per hour per IP). The host runs in
   * plain Node, one app per platform: see throttler-host/host-main.ts for why not in jest.
   */
  describe.each(PLATFORMS)('a host with @nestjs/throttler as a global guard (%s)', (platform) => {
    const url = (): string => host.urls[platform]!;

    const startFrom = (ip: string) =>
      call(
        url(),
        'POST',
        '/verification/start',
        { phone_number: freshPhone(), method: 'sms' },
        {
          'x-forwarded-for': ip,
        },
      );

    it('the module limits answer with their own problem; the host throttling keeps its own answers on its routes', async () => {
      const ip = freshIp();
      expect((await startFrom(ip)).status).toBe(201);
      expect((await startFrom(ip)).status).toBe(201);
      const ours = await startFrom(ip);
      // Past the per-address limit an SMS is graded (a shared address is not refused): 409
      // `method_held`, which offers the methods charged on proof.
      expect(refusal(ours)).toMatchObject({ status: 409, errorCode: 'method_held' });
      expect(ours.body).toMatchObject({ held: 'start_ip_limit' });
      expect(ours.headers.get('content-type')).toMatch(/application\/problem\+json/);

      const hostIp = freshIp();
      for (let i = 0; i < 4; i++)
        expect(
          (await call(url(), 'GET', '/host-limited', undefined, { 'x-forwarded-for': hostIp })).status,
        ).toBe(200);
      const theirs = await call(url(), 'GET', '/host-limited', undefined, { 'x-forwarded-for': hostIp });
      expect(theirs.status).toBe(429);
      expect(theirs.headers.get('content-type')).not.toMatch(/problem\+json/);
      expect(theirs.body).not.toHaveProperty('error_code');
    });

    it('when the host throttler refuses a module route, its own 429 and Retry-After pass through untouched', async () => {
      const ip = freshIp();
      const responses = [];
      for (let i = 0; i < 5; i++)
        responses.push(
          await call(url(), 'GET', '/verification/methods', undefined, { 'x-forwarded-for': ip }),
        );
      expect(responses.slice(0, 4).map((r) => r.status)).toEqual([200, 200, 200, 200]);
      const refused = responses[4];
      expect(refused.status).toBe(429);
      // The host's decision, in the host's format: the module does not rewrite it into a problem.
      expect(refused.headers.get('content-type')).not.toMatch(/problem\+json/);
      expect(refused.body).not.toHaveProperty('error_code');
      expect(refused.body.statusCode).toBe(429);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });
});
