import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import type { LedgerOptions } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { FakeUsage, ledgerOn as ledgerWith } from '../../test/support/ledger.fixture.js';
import { NOON } from '../../test/support/method-stats.fixture.js';
import { USAGE_READ_EVERY_MS, UsageReads } from './usage-reads.js';

const TODAY = '2026-03-15';
let now = NOON;

function ledgerOn(store: VerificationStore, usage: FakeUsage, ledger: LedgerOptions | false = {}) {
  return ledgerWith(store, usage, () => now, ledger);
}

describe('UsageReads: one reader shared with the spend cap', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
  });
  afterEach(() => store.close());

  it('keeps what the spend cap read: the ledger reuses it instead of asking again', async () => {
    const { ledger, reads } = ledgerOn(store, usage);
    usage.charged.set(TODAY, 4.5);
    expect((await reads.read(TODAY)).chargedMinor).toBe(450);
    expect(await ledger.report(TODAY)).toMatchObject({ usage: { charged: 4.5 }, drift: 4.5 });
    expect(usage.reads).toStrictEqual([TODAY]);
  });

  it('one read per day and 30 s across instances: the others take the kept reading', async () => {
    const a = ledgerOn(store, usage).reads;
    const b = ledgerOn(store, usage).reads;
    const first = await a.recent(TODAY, 0);
    const second = await b.recent(TODAY, 0);
    expect(usage.reads).toStrictEqual([TODAY]);
    expect(second).toStrictEqual(first);
    now += USAGE_READ_EVERY_MS;
    await b.recent(TODAY, 0);
    expect(usage.reads).toHaveLength(2);
  });

  it('a kept reading that is not one is no reading', async () => {
    const { reads } = ledgerOn(store, usage);
    await store.set('ledger:2026-03-15:usage', '{bad', 60_000);
    expect(await reads.kept(TODAY)).toBeUndefined();
    await store.set('ledger:2026-03-15:usage', JSON.stringify({ chargedMinor: 1.5 }), 60_000);
    expect(await reads.kept(TODAY)).toBeUndefined();
  });

  it('with the ledger off, a read is not kept', async () => {
    const { reads } = ledgerOn(store, usage, false);
    await reads.read(TODAY);
    expect(await reads.kept(TODAY)).toBeUndefined();
  });

  it('a usage without a total cost is refused', async () => {
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
    });
    const api = { getUsage: async () => ({ totalCost: { amount: 'n/a', currency: 'RUB' } }) };
    await expect(new UsageReads(options, api as never, store).read(TODAY)).rejects.toThrow(
      'usage: no total cost',
    );
  });
});
