/**
 * Redis goes away under two instances (one on ioredis, one on node-redis, both RedisStores on a
 * throwaway redis-server) and comes back on the same port with its data. While it is away the
 * client routes answer 503 `service_unavailable` (never a 500, and nothing reaches the API
 * unprotected), the webhook route answers 503 so the sender retries, and nothing is emitted;
 * once it is back the instances work again by themselves and the retried webhook gives its one
 * event.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationStoreUnavailableError } from '../../src/store/store-unavailable.error.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { ThrowawayRedisServer } from '../support/redis-server.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  apiCheck,
  drive,
  nextPhone,
  reconcilerOf,
  settle,
  startSession,
  type StartedSession,
} from '../webhooks/harness.js';
import { eventsAcross, startInstance, uniqueKeyPrefix, type Instance } from './deployment.js';
import { restoreSnapshot, snapshotPrefix } from './redis-snapshot.js';
import { forward, WebhookFanout, type FannedDelivery } from './webhook-fanout.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** Short, so that each request made while Redis is away fails fast. */
const COMMAND_TIMEOUT_MS = 250;
const UPSTREAM_ROUTES = ['POST /v1/verify', 'POST /v1/verify/check', 'GET /v1/verify/:id'];

type Answer = Awaited<ReturnType<typeof call>>;

/** The answer a client route gives while the store is down. */
function asOutage(res: Answer): unknown {
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    errorCode: res.body.error_code,
    retryAfter: res.headers.get('retry-after'),
  };
}
const OUTAGE = {
  status: 503,
  contentType: expect.stringMatching(/^application\/problem\+json/),
  errorCode: 'service_unavailable',
  retryAfter: '5',
};

describe.each(ONE_PLATFORM)('Redis down and back under two instances (%s)', (platform) => {
  // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
  afterAll(async () => {
    for (const instance of instances) await instance.shutdown();
    await fanout?.close();
    await server?.stop();
  });
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let server: ThrowawayRedisServer;
  let instances: Instance[] = [];
  let fanout: WebhookFanout;
  let keyPrefix: string;

  const upstreamCounts = (): number[] => UPSTREAM_ROUTES.map((route) => sb.requestCount(route));
  const totalEvents = (): number => instances.reduce((n, i) => n + i.emitted.length, 0);
  const startOn = (instance: Instance, owner: string): Promise<Answer> =>
    call(
      instance.url,
      'POST',
      '/verification/start',
      { phone_number: nextPhone(), method: 'sms' },
      { 'x-user': owner },
    );

  beforeAll(async () => {
    sb = suite.sb;
    server = await ThrowawayRedisServer.start();
    keyPrefix = uniqueKeyPrefix('store-outage');
    const common = {
      platform,
      redisUrl: server.url,
      keyPrefix,
      commandTimeoutMs: COMMAND_TIMEOUT_MS,
      // The module's default protections: a start touches the store before anything is sent.
      module: { limits: {} },
    };
    instances = [
      await startInstance(sb, 'A', { ...common, wiring: 'store-ioredis-url' }),
      await startInstance(sb, 'B', { ...common, wiring: 'store-node-redis-url' }),
    ];
    // Every webhook lands on A and is recorded, to be replayed to B.
    fanout = await WebhookFanout.start(
      () => instances.map((i) => `${i.url}/verification/webhooks`),
      () => ({ primary: 0, duplicates: 'none' }),
    );
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: fanout.url });
  });

  it('503 everywhere while it is away, nothing sent or emitted; back by itself, the retried webhook gives one event', async () => {
    const [a, b] = instances;
    const before = await startSession(a, sb, 'sms', 'owner-before');
    const pending: StartedSession = await startSession(b, sb, 'sms', 'owner-pending');
    await drive(sb, before, 'verified');
    await settle(sb);
    expect(eventsAcross(instances, before.requestId).map((e) => e.event)).toEqual(['verification.verified']);
    const [beforeDelivery] = fanout.of(before.requestId);

    const snapshot = await snapshotPrefix(server.url, keyPrefix);
    await server.stop();
    const upstream = upstreamCounts();

    // Client routes, on both instances: a clear 503 problem, nothing reaches the API.
    for (const instance of instances) {
      const answers = await Promise.all([
        startOn(instance, 'owner-during'),
        call(
          instance.url,
          'POST',
          '/verification/check',
          { verification_id: pending.verificationId, code: '123456' },
          { 'x-user': pending.owner },
        ),
        call(instance.url, 'GET', `/verification/status/${pending.verificationId}`, undefined, {
          'x-user': pending.owner,
        }),
      ]);
      for (const res of answers)
        expect({ instance: instance.name, answer: asOutage(res) }).toEqual({
          instance: instance.name,
          answer: OUTAGE,
        });
      // What needs no store still answers.
      expect((await call(instance.url, 'GET', '/verification/methods')).status).toBe(200);
    }
    expect(upstreamCounts()).toEqual(upstream);

    // The user verifies meanwhile: the webhook is answered 503 (the sender will retry), on either instance.
    await sb.deliver(pending.requestId);
    expect(await apiCheck(sb, pending.requestId, String(sb.getSession(pending.requestId)!.code))).toBe(200);
    await settle(sb);
    const [lost]: FannedDelivery[] = fanout.of(pending.requestId);
    const webhookRoute = (i: Instance) => `${i.url}/verification/webhooks`;
    expect(lost.answers).toEqual([
      {
        target: 0,
        status: 503,
        result: 'service_unavailable',
        contentType: expect.stringMatching(/^application\/problem\+json/),
      },
    ]);
    expect(await forward(webhookRoute(b), lost)).toMatchObject({
      status: 503,
      result: 'service_unavailable',
    });
    // An already handled delivery cannot even be recognised as one now: 503 too, and no second event.
    expect(await forward(webhookRoute(b), beforeDelivery)).toMatchObject({ status: 503 });
    for (const instance of instances)
      await expect(reconcilerOf(instance).runOnce()).rejects.toBeInstanceOf(
        VerificationStoreUnavailableError,
      );
    expect(totalEvents()).toBe(1);
    expect(
      sb
        .webhookLog()
        .filter((d) => d.request_id === pending.requestId)
        .map((d) => d.status),
    ).toEqual([503]);
    // Neither the webhook route nor the reconciler asked the API anything (the check above was the user's).
    expect([sb.requestCount('POST /v1/verify'), sb.requestCount('GET /v1/verify/:id')]).toEqual([
      upstream[0],
      upstream[2],
    ]);

    // Redis returns on the same port with its data; nobody restarts the instances.
    await server.start();
    await restoreSnapshot(server.url, snapshot);
    const posts = sb.requestCount('POST /v1/verify');
    for (const instance of instances) {
      const deadline = Date.now() + 10_000;
      let res = await startOn(instance, `owner-after-${instance.name}`);
      while (res.status !== 201 && Date.now() < deadline) {
        expect(asOutage(res)).toEqual(OUTAGE);
        await new Promise((resolve) => setTimeout(resolve, 100));
        res = await startOn(instance, `owner-after-${instance.name}`);
      }
      expect({ instance: instance.name, status: res.status }).toEqual({
        instance: instance.name,
        status: 201,
      });
    }
    // Only the two starts that succeeded went out.
    expect(sb.requestCount('POST /v1/verify') - posts).toBe(2);

    // The sender's retry (1 s later on its clock) is processed: exactly one event.
    await sb.advance(1000);
    await settle(sb);
    expect(
      sb
        .webhookLog()
        .filter((d) => d.request_id === pending.requestId)
        .map((d) => d.status),
    ).toEqual([503, 200]);
    const emitted = eventsAcross(instances, pending.requestId);
    expect(emitted.map((e) => [e.event, e.source])).toEqual([['verification.verified', 'webhook']]);
    expect(await forward(webhookRoute(b), lost)).toMatchObject({ status: 200, result: 'duplicate' });
    expect(await forward(webhookRoute(b), beforeDelivery)).toMatchObject({
      status: 200,
      result: 'duplicate',
    });
    const status = await call(b.url, 'GET', `/verification/status/${pending.verificationId}`, undefined, {
      'x-user': pending.owner,
    });
    expect(status.body).toMatchObject({ status: 'verified' });
    expect(totalEvents()).toBe(2);
  });
});
