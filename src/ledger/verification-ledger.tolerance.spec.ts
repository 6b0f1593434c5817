/**
 * The ledger's tolerance is kept to the kopeck: a host's tolerance (major units) is not exact in binary
 * (0.29 × 100 = 28.999…), and read short by a kopeck it turned a drift of exactly the tolerance into one
 * beyond it, on the day's report and on the balance side.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { methodStatsFixture, NOON, rub } from '../../test/support/method-stats.fixture.js';
import { FakeUsage, ledgerOn } from '../../test/support/ledger.fixture.js';

const TODAY = '2026-03-15';
let now = NOON;
const { session } = methodStatsFixture(() => now);

describe('VerificationLedger: a tolerance in kopecks', () => {
  let store: MemoryStore;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
  });
  afterEach(() => store.close());

  it('a day’s drift of exactly the tolerance is within it, a kopeck more beyond', async () => {
    const usage = new FakeUsage();
    const { ledger } = ledgerOn(store, usage, () => now, { tolerance: 0.29 });
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.count(session({ method: 'operator_id', cost: rub(2) }));
    usage.charged.set(TODAY, 3.19);
    expect(await ledger.report(TODAY)).toMatchObject({
      drift: 0.29,
      tolerance: 0.29,
      beyondTolerance: false,
    });
    now += 60_000;
    usage.charged.set(TODAY, 3.2);
    expect(await ledger.report(TODAY)).toMatchObject({ drift: 0.3, beyondTolerance: true });
  });

  it('a balance fall of exactly the tolerance is no drift, however often it is read', async () => {
    const { ledger, events } = ledgerOn(store, new FakeUsage(), () => now, { tolerance: 1.15 });
    await ledger.balanceRead(rub(100));
    await ledger.balanceRead(rub(98.85));
    await ledger.balanceRead(rub(98.85));
    expect(events).toStrictEqual([]);
  });
});
