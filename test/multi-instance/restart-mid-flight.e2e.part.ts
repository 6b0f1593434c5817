/**
 * A deployment replaced while sessions are in flight: every webhook is dropped (so only the
 * reconciler can finish a session), one instance dies right after claiming a batch of the shared
 * reconcile queue, the others are closed, outcomes happen while nothing runs, and new instances
 * start on the same Redis. Every session still ends in exactly one event, emitted by the new
 * instances unless the old ones had already emitted it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { RECONCILE_QUEUE } from '../../src/sessions/reconcile-queue.js';
import { RedisStore } from '../../src/store/redis.store.js';
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
import { eventsAcross, startInstance, uniqueKeyPrefix, untilAnswering, type Instance } from './deployment.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';
/** The reconciler's pace with webhooks configured (lazy), which is also a claim's lease. */
const LAZY_MS = 15_000;

interface Planned extends StartedSession {
  outcome: Outcome;
}

describe.each(ONE_PLATFORM)('all instances replaced mid-flight on the same Redis (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  const all: Instance[] = [];
  let keyPrefix: string;

  beforeAll(async () => {
    sb = suite.sb;
    keyPrefix = uniqueKeyPrefix('restart-mid-flight');
  });
  afterAll(async () => {
    for (const instance of all) await instance.shutdown();
  });

  const boot = async (name: string, wiring: Parameters<typeof startInstance>[2]['wiring']) => {
    const instance = await startInstance(sb, name, {
      platform,
      wiring,
      redisUrl: sharedRedisUrl(),
      keyPrefix,
    });
    all.push(instance);
    return instance;
  };

  it('every pending session ends in exactly one event, from the new instances, after the old ones are gone', async () => {
    const [a, b] = [await boot('A', 'store-ioredis-url'), await boot('B', 'host-node-redis')];
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${a.url}/verification/webhooks` });
    sb.addFault({ webhooks: { drop_rate: 1 } });

    const sessions: Planned[] = [];
    for (const [i, { method, outcome }] of OUTCOMES.entries())
      sessions.push({ ...(await startSession(i % 2 ? b : a, sb, method, `owner-${i}`)), outcome });
    // A few outcomes happen while the old instances run, and their passes emit them.
    const early = sessions.filter(
      (s) => s.outcome === 'verified' && ['sms', 'flash_call'].includes(s.method),
    );
    for (const s of early) await drive(sb, s, 'verified');
    await sb.advance(LAZY_MS);
    sb.resetRequestCounts();
    await Promise.all([reconcilerOf(a).runOnce(), reconcilerOf(b).runOnce()]);
    expect(sb.requestCount(GET_SESSION)).toBe(sessions.length);
    for (const s of early)
      expect(eventsAcross([a, b], s.requestId).map((e) => e.event)).toEqual(['verification.verified']);
    const inFlight = sessions.filter((s) => !early.includes(s));
    expect(inFlight.flatMap((s) => eventsAcross([a, b], s.requestId))).toEqual([]);

    // Mid-flight: a third instance claims 5 due sessions for its next pass and dies; A and B shut down.
    await sb.advance(LAZY_MS);
    const dying = new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock: () => sb.now() });
    await untilAnswering(dying);
    const leased = await dying.claimDue(RECONCILE_QUEUE, 5, LAZY_MS);
    await dying.close();
    expect(leased).toHaveLength(5);
    await a.shutdown();
    await b.shutdown();

    // While nothing runs, the users finish (their webhooks are lost).
    const played = inFlight.filter((s) => s.outcome !== 'expired');
    for (const s of played) await drive(sb, s, s.outcome);
    await settle(sb);

    const [c, d] = [await boot('C', 'host-ioredis'), await boot('D', 'store-node-redis-url')];
    const fresh = [c, d];
    const pass = async () =>
      (await Promise.all(fresh.map((i) => reconcilerOf(i).runOnce()))).reduce((x, y) => x + y);
    sb.resetRequestCounts();
    // The unclaimed in-flight sessions are due now; the dead instance's 5 wait for their lease to end.
    expect(await pass()).toBe(inFlight.length - leased.length);
    expect(sb.requestCount(GET_SESSION)).toBe(inFlight.length - leased.length);
    for (const s of played)
      expect({ method: s.method, events: eventsAcross(fresh, s.requestId).map((e) => e.event) }).toEqual({
        method: s.method,
        events: leased.includes(s.requestId) ? [] : [`verification.${s.outcome}`],
      });
    await sb.advance(LAZY_MS);
    sb.resetRequestCounts();
    await pass();
    // Both groups were due once more; each pending session was asked once by the pair, not once each.
    const expiring = inFlight.filter((s) => s.outcome === 'expired');
    expect(sb.requestCount(GET_SESSION)).toBe(
      expiring.filter((s) => !leased.includes(s.requestId)).length + leased.length,
    );

    // The rest expire; passes go on until the queue is empty.
    await sb.advance(301_000);
    await pass();
    for (let i = 0; i < 3 && (await reconcilerOf(c).pending()) > 0; i++) {
      await sb.advance(LAZY_MS);
      await pass();
    }
    expect(await reconcilerOf(d).pending()).toBe(0);

    const everyone = [a, b, c, d];
    for (const s of sessions) {
      const truth = await apiStatus(sb, s.requestId);
      expect({ method: s.method, truth }).toEqual({ method: s.method, truth: s.outcome });
      const emitted = eventsAcross(everyone, s.requestId);
      expect({ method: s.method, events: emitted.map((e) => e.event) }).toEqual({
        method: s.method,
        events: [`verification.${truth}`],
      });
      expect(emitted[0].source).toBe('poll');
      const emitters = early.includes(s) ? ['A', 'B'] : ['C', 'D'];
      expect({ method: s.method, by: emitters.includes(emitted[0].instance) }).toEqual({
        method: s.method,
        by: true,
      });
    }
    expect(sb.webhookLog().every((w) => w.status === 'dropped')).toBe(true);

    // Settled: later passes ask the API nothing and emit nothing.
    sb.resetRequestCounts();
    await sb.advance(60_000);
    expect(await pass()).toBe(0);
    expect(sb.requestCount(GET_SESSION)).toBe(0);
    expect(everyone.reduce((n, i) => n + i.emitted.length, 0)).toBe(sessions.length);
    sb.clearFaults();
  });
});
