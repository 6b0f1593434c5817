/**
 * A journey of more than one step across a restart, on the default MemoryStore (the new instance
 * has an empty store) and on Redis (the journey record is kept): the frontend holds its handle and
 * the `journey_token` the switch answer gave (a start resumed after the switch gives it too). After
 * the restart the status and check go to the current step, a step verified while the app was down
 * emits its event once and getVerifiedPhone answers its number, and `orchestration.maxSteps` still
 * holds.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { untilAnswering, uniqueKeyPrefix } from '../multi-instance/deployment.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { openSse } from '../support/sse-client.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { eventsOf, nextPhone, reconcilerOf, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const LAZY_MS = 15_000;
const STORES = ['memory', 'redis'] as const;

describe.each(ONE_PLATFORM.flatMap((platform) => STORES.map((store) => [platform, store] as const)))(
  'a journey across a restart (%s, %s store)',
  (platform, storeKind) => {
    const suite = sandboxSuite();
    let sb: VerificationSandbox;
    const hosts: TestApp[] = [];
    const stores: RedisStore[] = [];
    let keyPrefix: string;

    beforeAll(async () => {
      sb = suite.sb;
    });
    afterEach(async () => {
      for (const host of hosts.splice(0)) await host.close();
      for (const store of stores.splice(0)) await store.close();
    });

    /** One test's deployment: every boot shares the Redis key prefix (a MemoryStore starts empty). */
    const fresh = () => {
      keyPrefix = uniqueKeyPrefix('journey-restart');
    };
    const boot = async (module: Partial<VerificationModuleOptions> = {}) => {
      let store: RedisStore | undefined;
      if (storeKind === 'redis') {
        store = new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock: () => sb.now() });
        await untilAnswering(store);
        stores.push(store);
      }
      // Webhooks never reach the host: only polls and the reconciler learn outcomes.
      const host = await startHost(platform, sb, {
        receiveWebhooks: false,
        module: { ...module, ...(store ? { store } : {}) },
      });
      hosts.push(host);
      return host;
    };
    const stop = async (host: TestApp) => {
      hosts.splice(hosts.indexOf(host), 1);
      await host.close();
    };
    const who = (owner: string) => ({ 'x-user': owner });
    const query = (token: unknown) =>
      typeof token === 'string' ? `?journey_token=${encodeURIComponent(token)}` : '';
    const status = (host: TestApp, id: string, owner: string, token?: unknown) =>
      call(host.url, 'GET', `/verification/status/${id}${query(token)}`, undefined, who(owner));
    const post = (host: TestApp, route: string, owner: string, body: Record<string, unknown>) =>
      call(host.url, 'POST', `/verification/${route}`, body, who(owner));

    it('SMS, then operator_id approved while the app is down: verified, once, and the host reads the number', async () => {
      fresh();
      const before = await boot();
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-1', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      expect(started.body).not.toHaveProperty('journey_token');
      await sb.advance(61_000);
      const moved = await post(before, 'switch', 'user-1', { verification_id: id, method: 'operator_id' });
      expect(moved.body).toMatchObject({ verification_id: id, method: 'operator_id' });
      const token = moved.body.journey_token as string;
      expect(typeof token).toBe('string');
      // The status answer carries it too (a reload or another tab picks it up), the same string.
      expect((await status(before, id, 'user-1')).body.journey_token).toBe(token);
      await stop(before);

      const [operatorId] = sb.sessionsFor(phone).map((s) => s.request_id);
      await sb.operator(operatorId!, 'approve');
      // The restart takes longer than a poll interval: getVerifiedPhone reads a pending session at most once per one.
      await sb.advance(3_000);

      const after = await boot();
      const service = after.app.get(VerificationService);
      expect(await service.getVerifiedPhone(id, 'user-1', token)).toBe(phone);
      const seen = await status(after, id, 'user-1', token);
      expect(seen.status).toBe(200);
      expect(seen.body).toMatchObject({
        verification_id: id,
        method: 'operator_id',
        status: 'verified',
        methods_tried: ['sms', 'operator_id'],
        switch_methods: [],
      });
      // Once put back, the journey is the store's: the handle alone answers, and so does getVerifiedPhone.
      expect((await status(after, id, 'user-1')).body).toMatchObject({
        method: 'operator_id',
        status: 'verified',
      });
      expect(await service.getVerifiedPhone(id, 'user-1')).toBe(phone);
      await sb.advance(LAZY_MS);
      await reconcilerOf(after).runOnce();
      expect(eventsOf(after, operatorId!)).toEqual(['verification.verified']);
      // A token of another owner, or for another verification, puts nothing back.
      expect(await service.getVerifiedPhone(id, 'user-2', token)).toBeNull();
    });

    it('SMS, then flash call, restart: status and check go to the flash call, and maxSteps holds', async () => {
      fresh();
      const module = { orchestration: { maxSteps: 3 } };
      const before = await boot(module);
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-3', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(before, 'switch', 'user-3', { verification_id: id, method: 'flash_call' });
      expect(moved.status).toBe(201);
      const token = moved.body.journey_token as string;
      await stop(before);

      const after = await boot(module);
      const seen = await status(after, id, 'user-3', token);
      expect(seen.body).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
      const [callId, smsId] = sb.sessionsFor(phone).map((s) => s.request_id);
      await sb.deliver(callId!);
      await sb.deliver(smsId!);
      // The SMS code is not this step's: the flash call's code verifies.
      const checked = await post(after, 'check', 'user-3', {
        verification_id: id,
        code: sb.getSession(callId!)!.code!,
        journey_token: token,
      });
      expect(checked.body).toMatchObject({ verification_id: id, status: 'verified', verified: true });
      expect(sb.getSession(smsId!)!.status).not.toBe('verified');
      expect(after.events.filter((e) => e.event === 'verification.verified')).toHaveLength(1);
    });

    it('SMS, then flash call, restart: the status stream opened with the journey_token follows the flash call, as the status route does', async () => {
      fresh();
      const before = await boot();
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-7', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(before, 'switch', 'user-7', { verification_id: id, method: 'flash_call' });
      expect(moved.status).toBe(201);
      const token = moved.body.journey_token as string;
      await stop(before);

      const after = await boot();
      const opened = await openSse(
        `${after.url}/verification/status/${id}/events${query(token)}`,
        who('user-7'),
      );
      expect(opened.status).toBe(200);
      const events = opened.stream!;
      try {
        expect((await events.statusCount(1))[0]).toMatchObject({
          verification_id: id,
          method: 'flash_call',
          status: 'sent',
          methods_tried: ['sms', 'flash_call'],
        });
      } finally {
        events.close();
      }
    });

    it('SMS, then flash call, restart: a cancel carrying the journey_token ends the flash call, as the status route then says', async () => {
      fresh();
      const before = await boot();
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-9', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(before, 'switch', 'user-9', { verification_id: id, method: 'flash_call' });
      expect(moved.status).toBe(201);
      const token = moved.body.journey_token as string;
      await stop(before);

      const after = await boot();
      const canceled = await post(after, 'cancel', 'user-9', { verification_id: id, journey_token: token });
      expect(canceled.status).toBe(200);
      expect(canceled.body).toEqual({ verification_id: id, status: 'canceled' });
      const seen = await status(after, id, 'user-9', token);
      expect(seen.body).toMatchObject({ method: 'flash_call', status: 'canceled', switch_methods: [] });
      // Nothing more of the journey is asked: a check of the flash call's code is refused.
      const [callId] = sb.sessionsFor(phone).map((s) => s.request_id);
      await sb.deliver(callId!);
      const checked = await post(after, 'check', 'user-9', {
        verification_id: id,
        code: sb.getSession(callId!)!.code!,
        journey_token: token,
      });
      expect(checked.status).toBe(409);
      expect(after.events.filter((e) => e.event === 'verification.verified')).toHaveLength(0);
    });

    it('a reload after a switch resumes the start: its answer carries the journey_token, which puts the journey back after a restart', async () => {
      fresh();
      // Protection on: the same start of the same owner, its session pending, is handed back.
      const module = { limits: { enabled: true } };
      const before = await boot(module);
      const phone = nextPhone();
      const first = await post(before, 'start', 'user-6', { phone_number: phone, method: 'sms' });
      const id = first.body.verification_id as string;
      expect(first.body).not.toHaveProperty('journey_token');
      // Within the SMS's resend cooldown: a start is handed back rather than sent again.
      await sb.advance(10_000);
      const moved = await post(before, 'switch', 'user-6', { verification_id: id, method: 'flash_call' });
      expect(moved.status).toBe(201);
      // The page reloads and starts SMS again: the journey's current step, and its token (as the switch gave it).
      const again = await post(before, 'start', 'user-6', { phone_number: phone, method: 'sms' });
      expect(again.body).toMatchObject({ verification_id: id, method: 'flash_call', resumed: true });
      expect(again.body.journey_token).toBe(moved.body.journey_token);
      expect(Object.keys(again.body).sort()).toEqual([...Object.keys(first.body), 'journey_token'].sort());
      await stop(before);

      const after = await boot(module);
      const seen = await status(after, id, 'user-6', again.body.journey_token);
      expect(seen.body).toMatchObject({ method: 'flash_call', methods_tried: ['sms', 'flash_call'] });
      expect(sb.sessionsFor(phone)).toHaveLength(2);
    });

    // A rebuilt step's journey takes no step beyond those it has (the steps before are only the page's word).
    it("one step, restart: a switch as the page's first call rebuilds the step (Redis: kept) and answers by the journey's steps", async () => {
      fresh();
      const before = await boot();
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-7', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      await stop(before);

      const after = await boot();
      await sb.advance(61_000);
      const moved = await post(after, 'switch', 'user-7', { verification_id: id, method: 'flash_call' });
      if (storeKind === 'memory') {
        expect(moved.status).toBe(409);
        expect(moved.body).toMatchObject({ error_code: 'journey_limit_reached', limit: 'max_steps' });
        expect((await status(after, id, 'user-7')).body).toMatchObject({ method: 'sms', status: 'sent' });
        expect(sb.sessionsFor(phone)).toHaveLength(1);
      } else {
        expect(moved.status).toBe(201);
        expect(moved.body).toMatchObject({ verification_id: id, method: 'flash_call' });
        expect((await status(after, id, 'user-7')).body).toMatchObject({
          method: 'flash_call',
          methods_tried: ['sms', 'flash_call'],
        });
        expect(sb.sessionsFor(phone)).toHaveLength(2);
      }
    });

    it('a journey at maxSteps before the restart cannot take another paid step after it', async () => {
      fresh();
      const module = { orchestration: { maxSteps: 2 } };
      const before = await boot(module);
      const phone = nextPhone();
      const started = await post(before, 'start', 'user-4', { phone_number: phone, method: 'sms' });
      const id = started.body.verification_id as string;
      await sb.advance(61_000);
      const moved = await post(before, 'switch', 'user-4', { verification_id: id, method: 'flash_call' });
      const token = moved.body.journey_token as string;
      await stop(before);

      const after = await boot(module);
      await sb.advance(61_000);
      const again = await post(after, 'switch', 'user-4', { verification_id: id, journey_token: token });
      expect(again.status).toBe(409);
      expect(again.body.error_code).toBe('journey_limit_reached');
      expect(sb.sessionsFor(phone)).toHaveLength(2);
    });
    it.each(['no token', 'an older token'] as const)(
      'after a restart, a replay with %s gives the journey no paid step beyond maxSteps',
      async (replay) => {
        fresh();
        const module = { orchestration: { maxSteps: 3 } };
        const before = await boot(module);
        const phone = nextPhone();
        const owner = `user-5-${replay.length}`;
        const started = await post(before, 'start', owner, { phone_number: phone, method: 'sms' });
        const id = started.body.verification_id as string;
        await sb.advance(61_000);
        const second = await post(before, 'switch', owner, { verification_id: id, method: 'flash_call' });
        const older = second.body.journey_token as string;
        await sb.advance(61_000);
        const third = await post(before, 'switch', owner, { verification_id: id, method: 'msgr1_otp' });
        expect(third.status).toBe(201);
        await stop(before);

        const after = await boot(module);
        await sb.advance(61_000);
        const token = replay === 'no token' ? {} : { journey_token: older };
        for (let i = 0; i < 3; i += 1) {
          await post(after, 'switch', owner, { verification_id: id, ...token });
          await sb.advance(61_000);
        }
        // Paid upstream starts of this journey: never more than maxSteps.
        expect(sb.sessionsFor(phone).length).toBeLessThanOrEqual(3);
      },
    );
  },
);
