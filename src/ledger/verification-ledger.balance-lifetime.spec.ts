import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { methodStatsFixture, NOON, rub } from '../../test/support/method-stats.fixture.js';
import { FakeUsage, ledgerOn } from '../../test/support/ledger.fixture.js';

/**
 * The balance side over longer than the ledger keeps its days: the all-time charged count a balance
 * reading is compared with lives on, so a fall weeks after the last reading is weighed against every
 * charge counted since.
 */
const DAY = 86_400_000;
let now = NOON;
const { session } = methodStatsFixture(() => now);

describe('VerificationLedger: the balance side past the days’ retention', () => {
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((store) => store.close()));
  });

  it('a fall forty days after the last reading is weighed against the charges counted since, not against none', async () => {
    now = NOON;
    const store = new MemoryStore({ clock: () => now });
    stores.push(store);
    const { ledger, events } = ledgerOn(store, new FakeUsage(), () => now, { tolerance: 0.5 });
    await ledger.count(session({ requestId: 'req-early', method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.balanceRead(rub(100));
    now += 40 * DAY;
    await ledger.count(session({ requestId: 'req-late', method: 'msgr1_otp', cost: rub(0.9) }));
    // 3 RUB debited, 0.9 of it counted: a drift of 2.10, announced on its second reading in a row.
    await ledger.balanceRead(rub(97));
    await ledger.balanceRead(rub(97));
    expect(events).toStrictEqual([
      expect.objectContaining({ source: 'balance', expected: 0.9, charged: 3, drift: 2.1 }),
    ]);
  });
});
