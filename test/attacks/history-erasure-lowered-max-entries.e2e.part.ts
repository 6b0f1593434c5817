/**
 * Attack (U3): an erasure reads `max(maxEntries, the default's 100)` slots of each shelf ("history off, or
 * made smaller since"). A host that ran with a larger `maxEntries` (the option allows up to 10,000) and
 * lowered it since leaves the slots past the 100th unread: an owner erased then keeps those entries in its
 * own ring (listed again once the host raises `maxEntries` back), and the numbers they name keep the
 * owner, listed under the lowered configuration already.
 *
 * Expected: an erasure takes every entry of the subject whatever `maxEntries` was when they were written
 * (as it does for `retentionDays` and for history turned off). High (personal data after its erasure).
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

describe.each(storeKinds('history-lowered'))(
  'history: an owner erased after maxEntries was lowered (%s)',
  (label, make) => {
    const suite = sandboxSuite();
    let store: VerificationStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });

    async function boot(module: Partial<VerificationModuleOptions>): Promise<VerificationHistory> {
      store ??= make(() => suite.sb.now());
      await suite.host?.close();
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, { ...module, store }),
      });
      return suite.host.app.get(VerificationHistory);
    }

    it('maxEntries 102, then 5: the erasure leaves none of its entries, whatever maxEntries is later', async () => {
      await boot({ history: { maxEntries: 102 } });
      const numbers = Array.from(
        { length: 102 },
        (_, i) =>
          `+7916${label === 'MemoryStore' ? 73 : 74}${String(process.pid % 100).padStart(2, '0')}${String(i).padStart(3, '0')}`,
      );
      for (const phone of numbers) {
        const started = await call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number: phone, method: 'sms' },
          { 'x-user': 'olga' },
        );
        expect(started.status).toBe(201);
      }

      const lowered = await boot({ history: { maxEntries: 5 } });
      await suite.host!.app.get(VerificationErasure).forget({ owner: 'olga' });

      // Under the lowered configuration: no number's history names the erased owner.
      const named: string[] = [];
      for (const phone of numbers)
        for (const entry of await lowered.list({ phoneNumber: phone }))
          if (entry.owner !== undefined) named.push(`${phone} ${entry.owner}`);
      expect(named).toEqual([]);
      // Raised back: nothing of the owner's history comes back.
      const raised = await boot({ history: { maxEntries: 102 } });
      expect(await raised.list({ owner: 'olga' })).toEqual([]);
    }, 60_000);
  },
);
