/**
 * Attack (U4): the links at the retention bound when one side's entry was a repeat. A number's ring folds a
 * second owner's refusal within the hour into the first one's entry, and an owner's ring folds the owner's same
 * refusal of a second number into its entry of the first: the other side's entry is then reachable by an
 * erasure only through the link its write renewed. Is the link alive as long as that entry (renewed when only
 * the other side wrote)?
 *
 * Result (the attack did not succeed): the number's erasure a tick before the second owner's entry ends removes
 * it (the link renewed by it); the owner's erasure a tick before the second number's entry ends removes the
 * owner from it; at the bound the entries are gone by themselves. retentionDays 1. MemoryStore and RedisStore.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { storeKinds } from '../support/gated-stores.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(storeKinds('history-links-bound'))(
  'history: links at the retention bound, one side folded (%s)',
  (label, make) => {
    const suite = sandboxSuite();
    let store: VerificationStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });
    let serial = 0;
    const phoneNumber = () =>
      `+7916${label === 'MemoryStore' ? 77 : 78}${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;

    async function boot(module: Partial<VerificationModuleOptions>): Promise<VerificationHistory> {
      store ??= make(() => suite.sb.now());
      await suite.host?.close();
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, {
          limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
          ...module,
          store,
        }),
      });
      return suite.host.app.get(VerificationHistory);
    }
    const refuse = async (phone: string, user: string) =>
      expect(
        (
          await call(
            suite.host!.url,
            'POST',
            '/verification/start',
            { phone_number: phone, method: 'sms' },
            { 'x-user': user },
          )
        ).status,
      ).toBe(403);
    const forget = (subject: { phoneNumber: string } | { owner: string }) =>
      suite.host!.app.get(VerificationErasure).forget(subject);

    it("a number refused to a second owner in a later hour, folded in the number's ring: the number's erasure reaches that owner's entry a tick before its end", async () => {
      const history = await boot({ history: { retentionDays: 1 } });
      const phone = phoneNumber();
      await refuse(phone, 'walt');
      await suite.sb.advance(2 * HOUR);
      await refuse(phone, 'uma');
      await suite.sb.advance(1000);
      await refuse(phone, 'walt');
      const second = suite.sb.now();
      // The number's own entries (walt's first, uma's) are gone a tick before the second owner's entry is.
      await suite.sb.advance(second + DAY - 1 - suite.sb.now());
      expect(await history.list({ phoneNumber: phone })).toEqual([]);
      expect((await history.list({ owner: 'walt' })).map((e) => e.phoneNumber)).toEqual([phone]);

      await forget({ phoneNumber: phone });

      expect(await history.list({ owner: 'walt' })).toEqual([]);
    });

    it("an owner refused the same way on a second number within the hour, folded in the owner's ring: the owner's erasure reaches the second number's entry a tick before its end, and at it the entry is gone", async () => {
      const history = await boot({ history: { retentionDays: 1 } });
      const [first, second] = [phoneNumber(), phoneNumber()];
      await refuse(first, 'olga');
      await suite.sb.advance(1000);
      await refuse(second, 'olga');
      const at = suite.sb.now();
      await suite.sb.advance(at + DAY - 1 - suite.sb.now());
      expect(await history.list({ owner: 'olga' })).toEqual([]);
      expect((await history.list({ phoneNumber: second })).map((e) => e.owner)).toEqual(['olga']);

      await forget({ owner: 'olga' });

      // Kept without the owner until its end (on Redis, a 1 ms TTL runs on Redis' own clock: gone already).
      expect((await history.list({ phoneNumber: second })).filter((e) => e.owner !== undefined)).toEqual([]);
      await suite.sb.advance(1);
      expect(await history.list({ phoneNumber: second })).toEqual([]);
    });
  },
);
