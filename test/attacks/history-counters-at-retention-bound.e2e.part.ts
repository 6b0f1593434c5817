/**
 * Attack (U3, did not succeed): a ring's slot counter is renewed by each entry (a sliding window), so it
 * restarts only once the last entry it numbered has ended. Tried at the bound, on MemoryStore and on
 * RedisStore (whose counters are the `r` operation of its Lua script, a group of operations or alone): an
 * entry written one tick before the first entry's end keeps its slot when the next entries come at that
 * end and after it; and a counter that does restart (the ring quiet for retentionDays to the tick) writes
 * over nothing live. What a fixed window would do here: the second entry, a day younger than its end,
 * written over by the third and fourth.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';
import { storeKinds } from '../support/gated-stores.js';

const DAY = 86_400_000;

describe.each(storeKinds('history-counters-bound'))(
  "history: a ring's slot counter at its entries' retention bound (%s)",
  (label, make) => {
    const suite = sandboxSuite();
    let store: VerificationStore | undefined;
    afterEach(async () => {
      await store?.close();
      store = undefined;
    });
    let serial = 0;
    const phoneNumber = () =>
      `+791677${label === 'MemoryStore' ? 1 : 2}${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

    async function boot(): Promise<VerificationHistory> {
      store = make(() => suite.sb.now());
      suite.host = await createTestApp({
        platform: 'express',
        module: moduleOptions(suite.sb, { history: { maxEntries: 3, retentionDays: 1 }, store }),
      });
      return suite.host.app.get(VerificationHistory);
    }
    const start = async (phone: string, user: string) =>
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
      ).toBe(201);
    const owners = async (history: VerificationHistory, phone: string) =>
      (await history.list({ phoneNumber: phone })).map((e) => e.owner);

    it('an entry one tick before the first one ends keeps its slot through the next two, written at that end and after it', async () => {
      const history = await boot();
      const phone = phoneNumber();
      const first = suite.sb.now();
      await start(phone, 'a');
      await suite.sb.advance(DAY - 1);
      await start(phone, 'b');
      expect(await owners(history, phone)).toEqual(['a', 'b']);
      await suite.sb.advance(1);
      expect(suite.sb.now()).toBe(first + DAY);
      await start(phone, 'c');
      await suite.sb.advance(1);
      await start(phone, 'd');
      expect(await owners(history, phone)).toEqual(['b', 'c', 'd']);
      // b's own end: a tick before it, still listed; at it, gone.
      await suite.sb.advance(first + 2 * DAY - 2 - suite.sb.now());
      expect(await owners(history, phone)).toEqual(['b', 'c', 'd']);
      await suite.sb.advance(1);
      expect(await owners(history, phone)).toEqual(['c', 'd']);
    });

    it('a ring quiet for retentionDays to the tick: its counter restarts, and its last entry has ended with it', async () => {
      const history = await boot();
      const phone = phoneNumber();
      await start(phone, 'e');
      await start(phone, 'f');
      await suite.sb.advance(DAY - 1);
      expect(await owners(history, phone)).toEqual(['e', 'f']);
      await suite.sb.advance(1);
      await start(phone, 'g');
      await start(phone, 'h');
      expect(await owners(history, phone)).toEqual(['g', 'h']);
    });
  },
);
