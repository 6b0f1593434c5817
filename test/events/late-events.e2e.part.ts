/**
 * Exactly once however late: a session's outcome event and a journey's `verification.verified` come
 * once per deployment whatever comes after them and when (a webhook sent again, a poll, the
 * reconciler, a second step verified, a restart on the same store), on either side of the emit
 * lease (EMIT_LEASE_MS) and up to the record's retention; on MemoryStore and RedisStore.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { createTestApp, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { moduleOptions, payloadFor, postWebhook, signed } from '../webhooks/harness.js';
import {
  apiCheck,
  check,
  freshPhone,
  journeyFixture,
  reconciler,
  sessionIds,
  start,
  status,
  switchMethod,
} from '../journeys/journey-host.js';

const STORES = ['memory', 'redis'] as const;
/** The emit lease (EMIT_LEASE_MS) and the record retention (RECORD_RETENTION_MS), written out: a test that read the constants would follow a unit slip in them. */
const EMIT_LEASE_MS = 60_000;
const RECORD_RETENTION_MS = 24 * 3_600_000;
/** The sandbox's session lifetime for an SMS: 300 s. */
const SESSION_MS = 300_000;

type Credentials = Awaited<ReturnType<VerificationSandbox['createAccount']>>;

const cases = ONE_PLATFORM.flatMap((platform) => STORES.map((store) => [platform, store] as const));

describe.each(cases)('events exactly once, however late (%s, %s store)', (platform, storeKind) => {
  const fx = journeyFixture();
  let webhookSecret = '';

  /** A host on the test's account (a restart boots another on the same account and store). */
  const boot = async (keyPrefix: string, account?: Credentials): Promise<TestApp> => {
    const credentials = account ?? (await fx.sb.createAccount({ balance: 10_000 }));
    fx.apiKey = credentials.apiKey;
    webhookSecret = credentials.webhookSecret;
    const base = moduleOptions(fx.sb);
    const host = await createTestApp({
      platform,
      module: {
        ...base,
        api: { ...base.api, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret },
        webhooks: { secret: credentials.webhookSecret },
        ...(storeKind === 'redis' ? { store: { url: sharedRedisUrl(), keyPrefix } } : {}),
      },
    });
    fx.hosts.push(host);
    await fx.sb.updateAccount(credentials.apiKey, { webhookUrl: `${host.url}/verification/webhooks` });
    hostAccount.set(host, credentials);
    return host;
  };
  const hostAccount = new Map<TestApp, Credentials>();
  /** A webhook of `event` for the session, as the API would send it again (a new delivery). */
  const webhookAgain = async (host: TestApp, event: string, requestId: string) => {
    const delivery = signed(webhookSecret, payloadFor(event, requestId), {
      timestampSeconds: Math.floor(fx.sb.now() / 1000),
    });
    return postWebhook(`${host.url}/verification/webhooks`, delivery);
  };
  const named = (host: TestApp, event: string) => host.events.filter((e) => e.event === event);

  it('a verified session: a webhook, a poll and the reconciler coming again a tick before, at and after the emit lease, and up to the record retention, emit nothing more', async () => {
    const host = await boot(uniqueKeyPrefix('late-once'));
    const phone = freshPhone();
    const started = await start(host, { phone_number: phone, method: 'sms' });
    const id = started.body.verification_id;
    const [smsId] = sessionIds(fx.sb, phone);
    await fx.sb.deliver(smsId!);
    expect((await check(host, id, fx.sb.getSession(smsId!)!.code!)).body).toMatchObject({ verified: true });
    await fx.sb.webhooksIdle();
    expect(named(host, 'verification.verified')).toHaveLength(1);

    let at = 0;
    for (const late of [
      EMIT_LEASE_MS - 1,
      EMIT_LEASE_MS,
      EMIT_LEASE_MS + 1,
      SESSION_MS + 1,
      RECORD_RETENTION_MS,
    ]) {
      await fx.sb.advance(late - at);
      at = late;
      expect((await webhookAgain(host, 'verification.verified', smsId!)).status).toBeLessThan(300);
      expect((await status(host, id)).body).toMatchObject({ status: 'verified' });
      await reconciler(host).runOnce();
      expect({ late, verified: named(host, 'verification.verified').length }).toEqual({ late, verified: 1 });
    }
    expect(host.events.map((e) => e.event)).toEqual(['verification.verified']);
  });

  it("a journey's second step verified later than the emit lease (and exactly at it) is verified_again, never a second verified", async () => {
    for (const gap of [EMIT_LEASE_MS - 1, EMIT_LEASE_MS, EMIT_LEASE_MS + 1, SESSION_MS - 1_000]) {
      const host = await boot(uniqueKeyPrefix('late-journey'));
      const phone = freshPhone();
      const first = await start(host, { phone_number: phone, method: 'flash_call' });
      const id = first.body.verification_id;
      expect((await switchMethod(host, id, 'reverse_flash_call')).status).toBe(201);
      const [flashId, callId] = sessionIds(fx.sb, phone);
      await fx.sb.call(callId!, phone);
      await fx.sb.webhooksIdle();
      await fx.sb.deliver(flashId!);
      await fx.sb.advance(gap);
      await apiCheck(fx.sb, fx.apiKey, flashId!, String(fx.sb.getSession(flashId!)!.code));
      await fx.sb.webhooksIdle();
      await reconciler(host).runOnce();
      const outcomes = host.events
        .filter((e) => e.event !== 'verification.code_required')
        .map((e) => [e.event, e.requestId]);
      expect({ gap, outcomes }).toEqual({
        gap,
        outcomes: [
          ['verification.verified', callId],
          ['verification.verified_again', flashId],
        ],
      });
      await host.close();
      fx.hosts.splice(fx.hosts.indexOf(host), 1);
    }
  });

  type Act = 'webhook' | 'poll' | 'reconcile' | 'restart' | 'wait';
  const acts: fc.Arbitrary<{ act: Act; ms: number }> = fc.record({
    act: fc.constantFrom<Act>('webhook', 'poll', 'reconcile', 'restart', 'wait'),
    ms: fc.constantFrom(1, EMIT_LEASE_MS - 1, EMIT_LEASE_MS, 15_000, SESSION_MS),
  });

  // A restart keeps the store on Redis only (a new MemoryStore starts empty).
  if (storeKind === 'redis')
    it('for any interleaving of webhooks, polls, reconciler runs, restarts and waits after a two-step journey verified: one terminal event per session and one verified per journey', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(acts, { minLength: 3, maxLength: 8 }), async (plan) => {
          const keyPrefix = uniqueKeyPrefix('late-any');
          const hosts = [await boot(keyPrefix)];
          let host = hosts[0]!;
          const phone = freshPhone();
          const first = await start(host, { phone_number: phone, method: 'flash_call' });
          const id = first.body.verification_id;
          await switchMethod(host, id, 'sms');
          const [flashId, smsId] = sessionIds(fx.sb, phone);
          await fx.sb.deliver(flashId!);
          await fx.sb.deliver(smsId!);
          await apiCheck(fx.sb, fx.apiKey, smsId!, String(fx.sb.getSession(smsId!)!.code));
          await apiCheck(fx.sb, fx.apiKey, flashId!, String(fx.sb.getSession(flashId!)!.code));
          await fx.sb.webhooksIdle();
          for (const { act, ms } of plan) {
            if (act === 'wait') await fx.sb.advance(ms);
            else if (act === 'webhook')
              for (const rid of [flashId!, smsId!]) await webhookAgain(host, 'verification.verified', rid);
            else if (act === 'poll') await status(host, id);
            else if (act === 'reconcile') await reconciler(host).runOnce();
            else {
              host = await boot(keyPrefix, hostAccount.get(host));
              hosts.push(host);
            }
          }
          for (const h of hosts) {
            await reconciler(h).runOnce();
          }
          await fx.sb.webhooksIdle();
          const all = hosts.flatMap((h) => h.events).filter((e) => e.event !== 'verification.code_required');
          const perSession = (rid: string) => all.filter((e) => e.requestId === rid).length;
          expect([perSession(flashId!), perSession(smsId!)]).toEqual([1, 1]);
          expect(all.filter((e) => e.event === 'verification.verified')).toHaveLength(1);
          expect(all.filter((e) => e.event === 'verification.verified_again')).toHaveLength(1);
          for (const h of hosts) {
            await h.close();
            fx.hosts.splice(fx.hosts.indexOf(h), 1);
          }
        }),
        { numRuns: 8 },
      );
    });
});
