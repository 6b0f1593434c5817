/**
 * One deployment of two instances on a real Redis Cluster (three masters, the slots split between
 * them): instance A with a host's ioredis `Cluster`, instance B with a host's node-redis
 * `createCluster()`. Sessions, event claims, the reconcile queue and the protections live on
 * different masters, and everything the module does still holds for the deployment as a whole.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { freshIp, freshPhone, refusal, startFrom } from '../protection/protection-host.js';
import { ThrowawayRedisCluster } from '../support/redis-cluster.js';
import { call, ONE_PLATFORM, type Platform } from '../support/verification-app.js';
import {
  apiStatus,
  drive,
  OUTCOMES,
  reconcilerOf,
  sendCode,
  settle,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import {
  eventsAcross,
  startInstance,
  uniqueKeyPrefix,
  type Instance,
  type InstanceOptions,
} from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('instances on a Redis Cluster', () => {
  let cluster: ThrowawayRedisCluster;

  beforeAll(async () => {
    cluster = await ThrowawayRedisCluster.start();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  describe.each(ONE_PLATFORM)('a deployment on a Redis Cluster (%s)', (platform: Platform) => {
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    let instances: Instance[] = [];

    async function deploy(module: InstanceOptions['module'] = {}, trustProxy = false): Promise<Instance[]> {
      const common = {
        platform,
        clusterSeeds: cluster.seeds,
        keyPrefix: uniqueKeyPrefix('redis-cluster'),
        module,
        trustProxy,
      };
      instances = [
        await startInstance(sb, 'A', { ...common, wiring: 'host-ioredis-cluster' }),
        await startInstance(sb, 'B', { ...common, wiring: 'host-node-redis-cluster' }),
      ];
      return instances;
    }

    beforeAll(async () => {
      sb = suite.sb;
    });
    afterEach(async () => {
      for (const instance of instances) await instance.shutdown();
      instances = [];
    });

    it('every outcome of every method: started on either instance, webhooks to B, polls on A; one event per (request_id, event)', async () => {
      const [a, b] = await deploy();
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${b.url}/verification/webhooks` });
      const sessions: (StartedSession & { outcome: Outcome })[] = [];
      for (const [i, { method, outcome }] of OUTCOMES.entries())
        sessions.push({ ...(await startSession(instances[i % 2], sb, method, `owner-${i}`)), outcome });
      for (const s of sessions.filter((p) => p.outcome !== 'expired'))
        await drive(sb, s, s.outcome, { viaFallback: s.method === 'operator_id' });
      await settle(sb);
      // Status polls on A read what B's webhooks stored.
      for (const s of sessions.filter((p) => p.outcome !== 'expired')) {
        const res = await call(a.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
          'x-user': s.owner,
        });
        expect({ method: s.method, status: res.status, body: res.body.status }).toEqual({
          method: s.method,
          status: 200,
          body: s.outcome,
        });
      }
      await sb.advance(301_000);
      await settle(sb);
      // The expired ones are found by the reconciler of either instance through the shared queue.
      await reconcilerOf(a).runOnce();
      await reconcilerOf(b).runOnce();

      for (const s of sessions) {
        expect(await apiStatus(sb, s.requestId)).toBe(s.outcome);
        const events = eventsAcross(instances, s.requestId).map((e) => e.event);
        const expected =
          s.method === 'operator_id' && s.outcome !== 'expired'
            ? ['verification.code_required', `verification.${s.outcome}`]
            : [`verification.${s.outcome}`];
        expect({ method: s.method, outcome: s.outcome, events }).toEqual({
          method: s.method,
          outcome: s.outcome,
          events: expected,
        });
      }
      expect(await reconcilerOf(b).pending()).toBe(0);
      await sb.advance(15_000);
      expect([await reconcilerOf(a).runOnce(), await reconcilerOf(b).runOnce()]).toEqual([0, 0]);
    });

    it('a handle sealed on A is checked on B, the answer polled on A: one verified event', async () => {
      const [a, b] = await deploy({ webhooks: undefined });
      const s = await startSession(a, sb, 'sms', 'owner-check');
      await sendCode(sb, s);
      const code = sb.getSession(s.requestId)!.code as string;
      const checked = await call(
        b.url,
        'POST',
        '/verification/check',
        { verification_id: s.verificationId, code },
        { 'x-user': s.owner },
      );
      expect({ status: checked.status, verified: checked.body.verified }).toEqual({
        status: 200,
        verified: true,
      });
      const polled = await call(a.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
        'x-user': s.owner,
      });
      expect(polled.body.status).toBe('verified');
      // Another owner cannot open the handle on either instance.
      for (const instance of instances) {
        const foreign = await call(
          instance.url,
          'GET',
          `/verification/status/${s.verificationId}`,
          undefined,
          {
            'x-user': 'someone-else',
          },
        );
        expect({ status: foreign.status, code: foreign.body.error_code }).toEqual({
          status: 404,
          code: 'not_found',
        });
      }
      expect(eventsAcross(instances, s.requestId).map((e) => e.event)).toEqual(['verification.verified']);
    });

    it('resend cooldown and per-phone limit hold across both instances', async () => {
      await deploy({ limits: { startPerIp: false } }, true);
      const phone = freshPhone();
      // One caller (one IP): the cooldown is per number and caller.
      const ip = freshIp();
      const posts = sb.requestCount('POST /v1/verify');
      const burst = await Promise.all(
        Array.from({ length: 6 }, (_, i) => startFrom(instances[i % 2], ip, phone)),
      );
      expect(burst.map((r) => r.status).sort()).toEqual([201, 429, 429, 429, 429, 429]);
      for (const refused of burst.filter((r) => r.status === 429))
        expect(refusal(refused)).toMatchObject({ reason: 'resend_cooldown', retryAfter: '60' });
      expect(sb.requestCount('POST /v1/verify') - posts).toBe(1);
      // Past the cooldown, one more start goes out from whichever instance takes it.
      await sb.advance(60_000);
      const again = await Promise.all(instances.map((instance) => startFrom(instance, ip, phone)));
      expect(again.map((r) => r.status).sort()).toEqual([201, 429]);
      expect(sb.sessionsFor(phone)).toHaveLength(2);
    });
  });
});
