/**
 * An in-doubt start across instances on one Redis: the start that timed out on instance A is
 * remembered in the shared store, the retry on B meets the shared cooldown (no second paid
 * initiation), and the session's webhook, delivered to B, is adopted there with A's caller as its
 * owner: one event for the deployment.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { freshPhone } from '../protection/protection-host.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { call, ONE_PLATFORM, type Platform } from '../support/verification-app.js';
import { settle, upstreamSessions } from '../webhooks/harness.js';
import { eventsAcross, startInstance, uniqueKeyPrefix, type Instance } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(ONE_PLATFORM)('in-doubt start adopted by another instance (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let instances: Instance[] = [];

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    sb.clearFaults();
    for (const instance of instances) await instance.shutdown();
    instances = [];
  });

  it('times out on A, is refused again on B by the shared cooldown, and is adopted by B from its webhook', async () => {
    const keyPrefix = uniqueKeyPrefix('in-doubt');
    for (const [name, wiring] of [
      ['A', 'store-ioredis-url'],
      ['B', 'host-node-redis'],
    ] as const)
      instances.push(
        await startInstance(sb, name, {
          platform,
          wiring,
          redisUrl: sharedRedisUrl(),
          keyPrefix,
          module: {
            api: {
              baseUrl: sb.url,
              apiKey: sb.demoAccount.apiKey,
              apiSecret: sb.demoAccount.apiSecret,
              // Only the start below answers past it; on a loaded machine no other answer does.
              timeoutMs: 1000,
              maxRetries: 0,
            },
            limits: {},
          },
        }),
      );
    const [a, b] = instances;
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${b.url}/verification/webhooks` });

    const phone = freshPhone();
    const start = (instance: Instance) =>
      call(
        instance.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'operator_id' },
        { 'x-user': 'user-7' },
      );
    sb.addFault({ route: 'POST /v1/verify', kind: 'latency', latency_ms: 2500, count: 1 });
    expect((await start(a)).status).toBe(503);
    const [session] = await upstreamSessions(sb, phone, 1);
    expect(session).toBeDefined();

    const again = await start(b);
    expect(again.status).toBe(429);
    expect(again.body.reason).toBe('resend_cooldown');
    expect(sb.sessionsFor(phone)).toHaveLength(1);

    await sb.operator(session!.request_id, 'approve');
    await settle(sb);
    const events = eventsAcross(instances, session!.request_id);
    expect(events.map((e) => [e.instance, e.event, e.source])).toEqual([
      ['B', 'verification.verified', 'webhook'],
    ]);
    expect(b.events.find((e) => e.requestId === session!.request_id)?.owner).toBe('user-7');
  });
});
