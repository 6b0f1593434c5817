/**
 * A session's end settles its spend reservation from its record (ProtectionEvents): an SMS the module saw
 * delivered is charged, one it never saw delivered stays counted as unproven until the day's usage gives it
 * back. A record the store lost at the moment the end is heard (an eviction of the key just written, a
 * failover that drops the last write) says nothing of the delivery: the reservation stays charged, so a
 * usage that does not show the charge yet (the API's figures lag its charges) gives nothing back, and the cap
 * holds what was paid. On the module's MemoryStore and on a RedisStore alike.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { ProtectionKeys } from '../../src/protection/protection-keys.js';
import { SessionRecordRepository } from '../../src/sessions/session-record.repository.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { eventually } from '../support/redis-server.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  memoryAndRedis,
  protectedHost,
  protectionFixture,
  refusal,
  startFrom,
  withStoreMethod,
} from './protection-host.js';

/** `inner`, which drops a session's record right after each write of it while `losing.id` names it. */
const losingRecords = (inner: VerificationStore, losing: { id?: string }): VerificationStore =>
  withStoreMethod(inner, 'set', (target) => async (key, ...rest) => {
    await target.set(key, ...rest);
    if (losing.id !== undefined && key === SessionRecordRepository.key(losing.id)) await target.delete(key);
  });

const STORES = memoryAndRedis('cap-lost');

describe.each(ONE_PLATFORM)('the spend cap and a record lost as its session ends (%s)', (platform) => {
  const fx = protectionFixture();
  const opened: VerificationStore[] = [];
  afterEach(async () => {
    await fx.host?.close();
    fx.host = undefined;
    await Promise.all(opened.splice(0).map((store) => store.close()));
  });

  it.each(STORES)(
    'an SMS seen delivered whose record is lost when its expiry is heard stays charged: a usage lagging the charge opens nothing (%s)',
    async (_store, make) => {
      await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, {
        population: { methods: { sms: { deliveryRate: 0, completionRate: 0 } } },
      });
      const inner = make(() => fx.sb.now());
      opened.push(inner);
      const losing: { id?: string } = {};
      // One SMS at 3 RUB fills the cap.
      fx.host = await protectedHost(
        fx.sb,
        platform,
        { pumping: false, spendCap: { amount: 3, windowMs: 86_400_000 } },
        { store: losingRecords(inner, losing) },
      );
      const host = fx.host;
      const phone = freshPhone();
      const started = await startFrom(host, freshIp(), phone);
      expect(started.status).toBe(201);
      const status = () =>
        call(host.url, 'GET', `/verification/status/${String(started.body.verification_id)}`);
      const [session] = fx.sb.sessionsFor(phone);
      const requestId = session!.request_id;
      expect(refusal(await startFrom(host, freshIp(), freshPhone()))).toMatchObject({
        status: 503,
        reason: 'spend_cap',
      });

      // Delivered, and seen so by the module: the API charged it.
      await fx.sb.deliver(requestId);
      expect((await status()).status).toBe(200);
      expect(fx.sb.getSession(requestId)!.status).toBe('delivered');

      // It expires; the read that hears it writes its end, which the store loses at once.
      losing.id = requestId;
      await fx.sb.advance(6 * 60_000);
      expect((await status()).body.status).toBe('expired');
      expect(await inner.get(SessionRecordRepository.key(requestId))).toBeNull();
      // The end is settled (its open reservation taken) before the next start asks the cap.
      await eventually(async () => {
        expect(await inner.get(ProtectionKeys.spendOpen(requestId))).toBeNull();
      }, 2000);
      expect(fx.sb.sessionsFor(phone)[0]?.charged).toBe(true);

      // The day's usage does not show the charge yet.
      fx.sb.addFault({
        route: 'GET /v1/usage',
        kind: 'field',
        field: 'total_cost',
        value: { amount: 0, currency: 'RUB' },
        count: 0,
      });
      await fx.sb.advance(30_000);
      expect(refusal(await startFrom(host, freshIp(), freshPhone()))).toMatchObject({
        status: 503,
        reason: 'spend_cap',
      });
    },
  );
});
