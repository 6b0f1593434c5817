/**
 * Three instances behind a webhook load balancer that delivers each signed webhook to a random
 * instance and its duplicates to the other two (at the same time or right after), while the
 * sandbox itself sends every message twice: each `(request_id, event)` reaches the deployment's
 * listeners exactly once in total.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  apiStatus,
  drive,
  OUTCOMES,
  reconcilerOf,
  settle,
  startSession,
  type Outcome,
  type StartedSession,
} from '../webhooks/harness.js';
import { eventsAcross, startInstance, uniqueKeyPrefix, type Instance } from './deployment.js';
import { forward, seededRandom, WebhookFanout, type FanoutPlan } from './webhook-fanout.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

interface Planned extends StartedSession {
  outcome: Outcome;
  startedOn: string;
}

/** The events a session must produce: operator_id goes through the SMS fallback unless it expires. */
function expectedEvents(s: Planned): string[] {
  const terminal = `verification.${s.outcome}`;
  return s.method === 'operator_id' && s.outcome !== 'expired'
    ? ['verification.code_required', terminal]
    : [terminal];
}

describe.each(ONE_PLATFORM)(
  'webhooks across three instances: one event per (request_id, event) (%s)',
  (platform) => {
    // Registered before the suite's hooks: what it closes goes before the sandbox, as before.
    afterAll(async () => {
      for (const instance of instances) await instance.shutdown();
      await fanout?.close();
    });
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    let instances: Instance[] = [];
    let fanout: WebhookFanout;
    /** Set by a test that places every delivery itself; random placement otherwise. */
    let placement: FanoutPlan | undefined;

    beforeAll(async () => {
      sb = suite.sb;
      const common = { platform, redisUrl: sharedRedisUrl(), keyPrefix: uniqueKeyPrefix('webhook-dedupe') };
      // One deployment, three ways of reaching the same Redis.
      instances = [
        await startInstance(sb, 'A', { ...common, wiring: 'store-ioredis-url' }),
        await startInstance(sb, 'B', { ...common, wiring: 'host-ioredis' }),
        await startInstance(sb, 'C', { ...common, wiring: 'host-node-redis' }),
      ];
      const random = seededRandom(0x5eed);
      fanout = await WebhookFanout.start(
        () => instances.map((i) => `${i.url}/verification/webhooks`),
        () =>
          placement ?? {
            primary: Math.floor(random() * instances.length),
            duplicates: random() < 0.5 ? 'concurrent' : 'after',
          },
      );
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: fanout.url });
      // The sender duplicates too: every message goes out twice at once, each copy fanned out again.
      sb.addFault({ webhooks: { duplicate_rate: 1, duplicates: 2 } });
    });

    it('every outcome of every method: one event in total, and every other copy is answered 200 duplicate', async () => {
      const sessions: Planned[] = [];
      for (const [i, { method, outcome }] of OUTCOMES.entries()) {
        const via = instances[i % instances.length];
        const started = await startSession(via, sb, method, `owner-${method}-${outcome}`);
        sessions.push({ ...started, outcome, startedOn: via.name });
      }
      for (const s of sessions.filter((p) => p.outcome !== 'expired'))
        await drive(sb, s, s.outcome, { viaFallback: s.method === 'operator_id' });
      await settle(sb);
      await sb.advance(301_000);
      await settle(sb);

      for (const s of sessions) {
        expect({ method: s.method, truth: await apiStatus(sb, s.requestId) }).toEqual({
          method: s.method,
          truth: s.outcome,
        });
        const emitted = eventsAcross(instances, s.requestId);
        expect({ method: s.method, outcome: s.outcome, events: emitted.map((e) => e.event) }).toEqual({
          method: s.method,
          outcome: s.outcome,
          events: expectedEvents(s),
        });
        expect(emitted.every((e) => e.source === 'webhook')).toBe(true);
      }
      // Nothing else reached any listener, and the work was shared, not done by one instance.
      const total = sessions.reduce((n, s) => n + expectedEvents(s).length, 0);
      expect(instances.reduce((n, i) => n + i.events.length, 0)).toBe(total);
      const emitters = new Set(
        sessions.flatMap((s) => eventsAcross(instances, s.requestId).map((e) => e.instance)),
      );
      expect(emitters.size).toBeGreaterThanOrEqual(2);

      // Per webhook-id: 2 copies x 3 instances = 6 answers, all 200, exactly one of them `processed`.
      const byId = new Map<string, string[]>();
      for (const d of fanout.deliveries)
        byId.set(d.webhookId, [
          ...(byId.get(d.webhookId) ?? []),
          ...d.answers.map((a) => `${a.status} ${a.result}`),
        ]);
      expect(byId.size).toBe(total);
      for (const [webhookId, answers] of byId)
        expect({ webhookId, answers: answers.sort() }).toEqual({
          webhookId,
          answers: [
            '200 duplicate',
            '200 duplicate',
            '200 duplicate',
            '200 duplicate',
            '200 duplicate',
            '200 processed',
          ],
        });
      // The sandbox never had to retry.
      expect(sb.webhookLog().filter((d) => d.status !== 200 || d.attempt !== 1)).toEqual([]);

      // Every session left the shared reconcile queue; later passes on any instance find nothing to emit.
      expect(await reconcilerOf(instances[0]).pending()).toBe(0);
      await sb.advance(15_000);
      const looked = await Promise.all(instances.map((i) => reconcilerOf(i).runOnce()));
      expect(looked).toEqual([0, 0, 0]);
      expect(instances.reduce((n, i) => n + i.events.length, 0)).toBe(total);
    });

    it('webhooks racing reconciler passes and status polls on every instance: still one event per outcome', async () => {
      const sessions: Planned[] = [];
      for (const [i, method] of (['reverse_flash_call', 'flash_call', 'msgr1_otp', 'sms'] as const).entries())
        for (let k = 0; k < 3; k++) {
          const via = instances[(i + k) % instances.length];
          sessions.push({
            ...(await startSession(via, sb, method, `racer-${method}-${k}`)),
            outcome: 'verified',
            startedOn: via.name,
          });
        }
      // The webhooks go out when the clock reaches the sessions' first reconcile poll (15 s, lazy pace).
      sb.addFault({ webhooks: { delay_ms: 15_000 } });
      try {
        for (const s of sessions) await drive(sb, s, 'verified');
        await sb.advance(15_000);
        await Promise.all([
          ...instances.map((i) => reconcilerOf(i).runOnce()),
          ...instances.flatMap((i) =>
            sessions.map((s) =>
              fetch(`${i.url}/verification/status/${s.verificationId}`, {
                headers: { 'x-user': s.owner },
              }).then((res) => expect(res.status).toBe(200)),
            ),
          ),
        ]);
        await settle(sb);
      } finally {
        sb.addFault({ webhooks: { delay_ms: 0 } });
      }
      const once = () =>
        sessions.map((s) => ({
          method: s.method,
          events: eventsAcross(instances, s.requestId).map((e) => e.event),
        }));
      expect(once()).toEqual(sessions.map((s) => ({ method: s.method, events: ['verification.verified'] })));
      // A poll that read a session before its webhook landed may have scheduled it again (seen under load):
      // the next pass, past its lease, finds it ended, emits nothing and leaves nothing behind.
      await sb.advance(301_000);
      await Promise.all(instances.map((i) => reconcilerOf(i).runOnce()));
      expect(once()).toEqual(sessions.map((s) => ({ method: s.method, events: ['verification.verified'] })));
      expect(await reconcilerOf(instances[2]).pending()).toBe(0);
    });

    it('a delivery handled by one instance, replayed later to the others, is a duplicate there', async () => {
      placement = { primary: 1, duplicates: 'none' };
      try {
        const s = await startSession(instances[0], sb, 'sms', 'owner-replay');
        await drive(sb, s, 'verified');
        await settle(sb);
        // The sender's two copies both went to B only.
        const copies = fanout.of(s.requestId);
        expect(
          copies.flatMap((d) => d.answers.map((a) => `${a.target} ${a.status} ${a.result}`)).sort(),
        ).toEqual(['1 200 duplicate', '1 200 processed']);
        const [delivery] = copies;
        for (const target of [0, 2, 1])
          expect({
            target,
            answer: await forward(`${instances[target].url}/verification/webhooks`, delivery),
          }).toEqual({
            target,
            answer: { status: 200, result: 'duplicate', contentType: expect.any(String) },
          });
        expect(eventsAcross(instances, s.requestId).map((e) => [e.instance, e.event])).toEqual([
          ['B', 'verification.verified'],
        ]);
      } finally {
        placement = undefined;
      }
    });
  },
);
