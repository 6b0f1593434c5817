/**
 * Attack (U3): an erasure finds the other side's rings through the subject's own ring only. A number's
 * erasure visits the owners its own entries name; an owner's erasure, the numbers its own entries name.
 * Whatever the other side holds that the subject's own ring no longer names survives the erasure:
 * - two owners refused on one number within the hour: the number's ring folds both into one entry (the
 *   first owner's), each owner's ring holds its own. The number erased: the second owner's ring still lists
 *   the number;
 * - an owner's ring pushed its entry of a number out (maxEntries) while the number's ring keeps it: the
 *   owner erased, the number's history still names the owner;
 * - a number's ring pushed an owner's entry out while the owner's ring keeps it: the number erased, the
 *   owner's history still lists the number.
 *
 * Expected (the erasure's contract, ErasureReport.historyEntries and docs): once `forget` answers, the
 * history read API lists no entry of an erased number, and no entry of a number names an erased owner.
 * High (personal data, the number or the owner id, readable after the deletion request it was erased by).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** The prefix of the RedisStore made last (one per test). */
let redisPrefix = '';

describe.each([
  [
    'MemoryStore',
    (clock: () => number): VerificationStore => new MemoryStore({ clock }),
    async (store: VerificationStore) => dumpMemoryStore(store as MemoryStore),
  ],
  [
    'RedisStore',
    (clock: () => number): VerificationStore =>
      new RedisStore({
        url: sharedRedisUrl(),
        keyPrefix: (redisPrefix = `history-other-rings:${randomUUID()}:`),
        clock,
        commandTimeoutMs: 10_000,
      }),
    () => dumpRedisPrefix(sharedRedisUrl(), redisPrefix),
  ],
])(
  'history: an erasure and the other side’s rings its own ring no longer names (%s)',
  (label, make, dump) => {
    const suite = sandboxSuite();
    let store: VerificationStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });
    let serial = 0;
    const phoneNumber = () =>
      `+7916${label === 'MemoryStore' ? 71 : 72}${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;

    async function boot(module: Partial<VerificationModuleOptions>): Promise<VerificationHistory> {
      store ??= make(() => suite.sb.now());
      await suite.host?.close();
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, { ...module, store }),
      });
      return suite.host.app.get(VerificationHistory);
    }
    const startAs = (phone: string, user: string, method = 'sms') =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method },
        { 'x-user': user },
      );
    const forget = (subject: { phoneNumber: string } | { owner: string }) =>
      suite.host!.app.get(VerificationErasure).forget(subject);

    it("a number refused to two owners within the hour, then erased: neither owner's history lists it", async () => {
      const history = await boot({
        history: {},
        limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
      });
      const phone = phoneNumber();
      for (const user of ['uma', 'walt']) expect((await startAs(phone, user)).status).toBe(403);
      expect((await history.list({ owner: 'walt' })).map((e) => e.phoneNumber)).toEqual([phone]);

      await forget({ phoneNumber: phone });

      expect(await history.list({ phoneNumber: phone })).toEqual([]);
      expect(await history.list({ owner: 'uma' })).toEqual([]);
      expect(await history.list({ owner: 'walt' })).toEqual([]);
    });

    it("an owner whose own history pushed a number's start out, then erased: the number's history names it no more", async () => {
      const history = await boot({ history: { maxEntries: 2 } });
      const [first, ...later] = [phoneNumber(), phoneNumber(), phoneNumber()];
      for (const phone of [first!, ...later]) expect((await startAs(phone, 'ivan')).status).toBe(201);
      expect((await history.list({ owner: 'ivan' })).map((e) => e.phoneNumber)).toEqual(later);
      expect((await history.list({ phoneNumber: first! })).map((e) => e.owner)).toEqual(['ivan']);

      await forget({ owner: 'ivan' });

      expect(await history.list({ owner: 'ivan' })).toEqual([]);
      // A store dump: no key or value of the history names the owner's ring (its only owner here).
      expect((await dump(store!)).filter((line) => line.includes('history:{o:'))).toEqual([]);
      for (const phone of [first!, ...later])
        expect((await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner])).toEqual([
          ['start', undefined],
        ]);
    });

    it("a number whose own history pushed an owner's start out, then erased: that owner's history lists it no more", async () => {
      const history = await boot({ history: { maxEntries: 2 }, limits: { resendCooldownMs: false } });
      const phone = phoneNumber();
      for (const user of ['jane', 'kurt', 'liam']) expect((await startAs(phone, user)).status).toBe(201);
      expect((await history.list({ phoneNumber: phone })).map((e) => e.owner)).toEqual(['kurt', 'liam']);
      expect((await history.list({ owner: 'jane' })).map((e) => e.phoneNumber)).toEqual([phone]);

      await forget({ phoneNumber: phone });

      expect(await history.list({ phoneNumber: phone })).toEqual([]);
      for (const user of ['jane', 'kurt', 'liam']) expect(await history.list({ owner: user })).toEqual([]);
    });
  },
);

describe('history: links of one pair written at once', () => {
  const suite = sandboxSuite();
  let store: MemoryStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });

  it('two starts of one number by one owner at once, then the number erased: no key or value of the history names it', async () => {
    store = new MemoryStore({ clock: () => suite.sb.now() });
    suite.host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { history: {}, store }),
    });
    const phone = `+791679${String(process.pid % 100).padStart(2, '0')}001`;
    const start = () =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': 'rita' },
      );
    expect((await Promise.all([start(), start(), start()])).map((answer) => answer.status)).toEqual([
      201, 201, 201,
    ]);
    await suite.host.app.get(VerificationErasure).forget({ phoneNumber: phone });
    expect(await suite.host.app.get(VerificationHistory).list({ owner: 'rita' })).toEqual([]);
    expect(dumpMemoryStore(store).filter((line) => line.includes('history:{n:'))).toEqual([]);
  });
});
