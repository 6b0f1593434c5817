import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import type { LedgerDriftEvent } from '../core/verification-events.js';
import type { LedgerOptions } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { methodStatsFixture, NOON, rub } from '../../test/support/method-stats.fixture.js';
import { FakeUsage, ledgerOn as ledgerWith } from '../../test/support/ledger.fixture.js';
import { LEDGER_FINAL_AFTER_MS, type VerificationLedger } from './verification-ledger.service.js';
import { USAGE_READ_EVERY_MS } from './usage-reads.js';

const TODAY = '2026-03-15';
let now = NOON;
const { session } = methodStatsFixture(() => now);

function ledgerOn(
  store: VerificationStore,
  usage: FakeUsage,
  ledger: LedgerOptions | false = {},
  name?: string,
) {
  return ledgerWith(store, usage, () => now, ledger, name);
}

describe('VerificationLedger: counting', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  let ledger: VerificationLedger;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
    ({ ledger } = ledgerOn(store, usage));
  });
  afterEach(() => store.close());

  it('counts each transition once however often it is seen, and the charge at the billing rule’s moment', async () => {
    const sms = session({ method: 'sms', cost: rub(3) });
    await ledger.count(sms);
    await ledger.count(sms);
    expect((await ledger.report(TODAY)).totals).toMatchObject({ started: 1, delivered: 0, expected: 0 });
    const delivered = { ...sms, status: 'delivered' as const, delivered: true };
    await ledger.count(delivered);
    await ledger.count(delivered);
    await ledger.count({ ...delivered, status: 'verified', verifiedAt: now });
    const report = await ledger.report(TODAY);
    expect(report.rows).toStrictEqual([
      {
        method: 'sms',
        prefix: '+7912',
        started: 1,
        delivered: 1,
        verified: 1,
        expired: 0,
        failed: 0,
        expected: 3,
        costPerVerified: 3,
      },
    ]);
  });

  it('charges per attempt at the start, on delivery once delivered, on proof once verified', async () => {
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9), status: 'expired' }));
    await ledger.count(session({ method: 'sms', cost: rub(3), status: 'expired' }));
    await ledger.count(session({ method: 'reverse_flash_call', cost: rub(0.25), status: 'expired' }));
    await ledger.count(session({ method: 'reverse_flash_call', cost: rub(0.25), status: 'verified' }));
    await ledger.count(session({ method: 'flash_call', cost: rub(0.8), status: 'failed', delivered: true }));
    const report = await ledger.report(TODAY);
    expect(Object.fromEntries(report.rows.map((r) => [r.method, r.expected]))).toStrictEqual({
      flash_call: 0.8,
      msgr1_otp: 0.9,
      reverse_flash_call: 0.25,
      sms: 0,
    });
    expect(report.totals).toMatchObject({ started: 5, expired: 3, failed: 1, verified: 1, expected: 1.95 });
    expect(report.totals.costPerVerified).toBe(1.95);
  });

  it('puts a session on the UTC day it started, whenever its end comes', async () => {
    now = Date.UTC(2026, 2, 15, 23, 59, 59, 999);
    const late = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await ledger.count(late);
    now += 1;
    await ledger.count({ ...late, status: 'expired' });
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    expect((await ledger.report('2026-03-15')).totals).toMatchObject({
      started: 1,
      expired: 1,
      expected: 0.9,
    });
    expect((await ledger.report('2026-03-16')).totals).toMatchObject({
      started: 1,
      expired: 0,
      expected: 0.9,
    });
  });

  it('keeps rows per operator prefix, an unknown method as other, and skips test numbers', async () => {
    await ledger.count(session({ phoneNumber: '+79851234567', status: 'failed', delivered: true }));
    await ledger.count(session({ method: 'carrier_pigeon', cost: rub(1) }));
    await ledger.count(session({ requestId: 'test_abc', method: 'msgr1_otp', cost: rub(0.9) }));
    const rows = (await ledger.report(TODAY)).rows.map((r) => [r.method, r.prefix, r.started, r.expected]);
    expect(rows).toStrictEqual([
      ['other', '+7912', 1, 1], // an unknown method is charged at the start (the safe side)
      ['sms', '+7985', 1, 3],
    ]);
  });

  it('past maxRowsPerDay, a new prefix goes to its method’s other row, the totals exact', async () => {
    ({ ledger } = ledgerOn(store, usage, { maxRowsPerDay: 2 }));
    const prefixes = ['+7912', '+7985', '+7903', '+7916'];
    for (const [i, prefix] of prefixes.entries())
      await ledger.count(
        session({ phoneNumber: `${prefix}${String(1_000_000 + i)}`, method: 'msgr1_otp', cost: rub(1) }),
      );
    await ledger.count(session({ phoneNumber: '+79121234567', method: 'msgr1_otp', cost: rub(1) }));
    const report = await ledger.report(TODAY);
    expect(report.rows.map((r) => [r.prefix, r.started])).toStrictEqual([
      ['+7912', 2],
      ['+7985', 1],
      ['other', 2],
    ]);
    expect(report.totals).toMatchObject({ started: 5, expected: 5 });
  });

  it('never fails its caller: a store error loses the count and is logged', async () => {
    const broken = Object.create(store) as MemoryStore;
    broken.setIfAbsent = async () => {
      throw new Error('store down');
    };
    const { ledger: failing } = ledgerOn(broken, usage);
    await expect(failing.count(session())).resolves.toBeUndefined();
  });

  it('with the ledger off, counts nothing and its reads name the option', async () => {
    const { ledger: off } = ledgerOn(store, usage, false);
    expect(off.enabled).toBe(false);
    await off.count(session());
    await off.balanceRead(rub(10));
    await off.reconcileClosedDay();
    await expect(off.report(TODAY)).rejects.toThrow('the ledger is off (give the "ledger" option');
    expect(usage.reads).toStrictEqual([]);
  });
});

describe('VerificationLedger: reconciling with the usage', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  let ledger: VerificationLedger;
  let events: LedgerDriftEvent[];
  const dayEnds = Date.UTC(2026, 2, 16);
  beforeEach(async () => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
    ({ ledger, events } = ledgerOn(store, usage, { tolerance: 0.5 }));
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.count(session({ method: 'operator_id', cost: rub(2) }));
  });
  afterEach(() => store.close());

  it('a drift within the tolerance (inclusive) is not beyond it; past it is, either way', async () => {
    usage.charged.set(TODAY, 3.4);
    expect(await ledger.report(TODAY)).toMatchObject({
      drift: 0.5,
      beyondTolerance: false,
      usage: { charged: 3.4 },
    });
    now += 60_000;
    usage.charged.set(TODAY, 3.41);
    expect(await ledger.report(TODAY)).toMatchObject({ drift: 0.51, beyondTolerance: true, final: false });
    now += 60_000;
    usage.charged.set(TODAY, 2.39);
    expect(await ledger.report(TODAY)).toMatchObject({ drift: -0.51, beyondTolerance: true });
    expect(events).toStrictEqual([]);
  });

  it('reads an open day at most once a minute, a final day hourly', async () => {
    await ledger.report(TODAY);
    now += 59_999;
    await ledger.report(TODAY);
    expect(usage.reads).toStrictEqual([TODAY]);
    now += 1;
    await ledger.report(TODAY);
    expect(usage.reads).toHaveLength(2);
    now = dayEnds + LEDGER_FINAL_AFTER_MS;
    await ledger.report(TODAY);
    now += 3_599_999;
    await ledger.report(TODAY);
    expect(usage.reads).toHaveLength(3);
    now += 1;
    await ledger.report(TODAY);
    expect(usage.reads).toHaveLength(4);
  });

  it('a failed read keeps the last reading; none at all gives no drift', async () => {
    usage.failing = true;
    expect(await ledger.report(TODAY)).toMatchObject({ usage: null, drift: null, beyondTolerance: false });
    usage.failing = false;
    now += USAGE_READ_EVERY_MS;
    usage.charged.set(TODAY, 2.9);
    await ledger.report(TODAY);
    usage.failing = true;
    now += 61_000;
    expect(await ledger.report(TODAY)).toMatchObject({ drift: 0, usage: { charged: 2.9 } });
  });

  it('announces a drift when the day is final, not a tick before; once per figure; again for a new figure', async () => {
    usage.charged.set(TODAY, 1.9);
    now = dayEnds + LEDGER_FINAL_AFTER_MS - 1;
    expect(await ledger.report(TODAY)).toMatchObject({ final: false, beyondTolerance: true });
    await ledger.reconcileClosedDay();
    expect(events).toStrictEqual([]);
    now += 1;
    await ledger.reconcileClosedDay();
    expect(events).toStrictEqual([
      {
        event: 'verification.ledger_drift',
        source: 'usage',
        date: TODAY,
        expected: 2.9,
        charged: 1.9,
        drift: -1,
        tolerance: 0.5,
        currency: 'RUB',
      },
    ]);
    await ledger.report(TODAY);
    expect(events).toHaveLength(1);
    usage.charged.set(TODAY, 0.9);
    now += FINAL_AGE;
    await ledger.report(TODAY);
    expect(events.map((e) => e.drift)).toStrictEqual([-1, -2]);
  });

  it("the closed day's reconciliation reads the usage only once the day is final, so a charge corrected in its last hour is seen", async () => {
    usage.charged.set(TODAY, 2.9);
    now = dayEnds + LEDGER_FINAL_AFTER_MS - 1;
    await ledger.reconcileClosedDay();
    expect(usage.reads).toStrictEqual([]);
    // The API settles the day's charges late: a correction in the hour before the day is final.
    usage.charged.set(TODAY, 1.9);
    now += 1;
    await ledger.reconcileClosedDay();
    expect(usage.reads).toStrictEqual([TODAY]);
    expect(events.map((e) => [e.date, e.drift])).toStrictEqual([[TODAY, -1]]);
  });

  it('two instances on one store announce a drift once', async () => {
    const other = ledgerOn(store, usage, { tolerance: 0.5 });
    usage.charged.set(TODAY, 0);
    now = dayEnds + LEDGER_FINAL_AFTER_MS;
    await Promise.all([ledger.report(TODAY), other.ledger.report(TODAY)]);
    expect(events.length + other.events.length).toBe(1);
  });

  it('a named registration’s drift names it', async () => {
    const named = ledgerOn(new MemoryStore({ clock: () => now }), usage, {}, 'brand-b');
    await named.ledger.count(session({ method: 'msgr1_otp', cost: rub(5) }));
    now = dayEnds + LEDGER_FINAL_AFTER_MS;
    await named.ledger.report(TODAY);
    expect(named.events).toStrictEqual([
      expect.objectContaining({ registration: 'brand-b', drift: -5, tolerance: 1 }),
    ]);
  });

  it('refuses dates it cannot read, naming the field', async () => {
    await expect(ledger.report('2026-03-16')).rejects.toThrow(
      'ledger.report: "date" is after today (2026-03-15)',
    );
    await expect(ledger.report(new Date(Number.NaN))).rejects.toThrow('"date" is an invalid Date');
    await expect(ledger.csv('15.03.2026')).rejects.toThrow(RangeError);
    expect(usage.reads).toStrictEqual([]);
    expect((await ledger.report(new Date(NOON))).date).toBe(TODAY);
    expect((await ledger.report()).date).toBe(TODAY);
  });
});

const FINAL_AGE = 3_600_000;

describe('VerificationLedger: the balance side', () => {
  let store: MemoryStore;
  let ledger: VerificationLedger;
  let events: LedgerDriftEvent[];
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    ({ ledger, events } = ledgerOn(store, new FakeUsage(), { tolerance: 0.5 }));
  });
  afterEach(() => store.close());

  it('a fall the counted charges explain is no drift', async () => {
    await ledger.balanceRead(rub(100));
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.balanceRead(rub(99.1));
    await ledger.balanceRead(rub(99.1));
    expect(events).toStrictEqual([]);
  });

  it('a fall past the tolerance is announced on its second reading in a row, and the mark moves on', async () => {
    await ledger.balanceRead(rub(100));
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.balanceRead(rub(98.59)); // 0.51 more than counted
    expect(events).toStrictEqual([]);
    await ledger.balanceRead(rub(98.59));
    expect(events).toStrictEqual([
      expect.objectContaining({ source: 'balance', date: TODAY, expected: 0.9, charged: 1.41, drift: 0.51 }),
    ]);
    await ledger.balanceRead(rub(98.59));
    await ledger.balanceRead(rub(98.59));
    expect(events).toHaveLength(1);
  });

  it('a fall past the tolerance while nothing was counted is a drift too (every charge unseen)', async () => {
    // Sessions counted before the first reading: the counter stands still from there on.
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    await ledger.balanceRead(rub(100));
    await ledger.balanceRead(rub(98));
    expect(events).toStrictEqual([]);
    await ledger.balanceRead(rub(98));
    expect(events).toStrictEqual([
      expect.objectContaining({ source: 'balance', expected: 0, charged: 2, drift: 2 }),
    ]);
  });

  it('a fall within the tolerance, or one that a later reading explains, is no drift', async () => {
    await ledger.balanceRead(rub(100));
    await ledger.balanceRead(rub(99.5));
    await ledger.balanceRead(rub(96.5)); // an SMS charged before the module saw its delivery
    const sms = session({ method: 'sms', cost: rub(3), delivered: true, status: 'delivered' });
    await ledger.count(sms);
    await ledger.balanceRead(rub(96.5));
    expect(events).toStrictEqual([]);
  });

  it('a rise is a top-up: the mark moves, nothing announced', async () => {
    await ledger.balanceRead(rub(10));
    await ledger.balanceRead(rub(500));
    await ledger.balanceRead(rub(500));
    expect(events).toStrictEqual([]);
  });

  it('ignores a reading that is not an amount', async () => {
    await ledger.balanceRead(rub(10));
    await ledger.balanceRead(rub(Number.NaN));
    await ledger.balanceRead(rub(5));
    expect(events).toStrictEqual([]); // the fall from 10 is suspect once, as if NaN were never read
    await ledger.balanceRead(rub(5));
    expect(events).toHaveLength(1);
  });
});
