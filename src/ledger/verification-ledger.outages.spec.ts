/**
 * The ledger when things around it fail or are absent, as a host sees it: a store that fails (the
 * count, the balance reading and the closed day's reconciliation each log a warning and never throw;
 * a row whose slot could not be given gets it at its next session), a host without the event emitter
 * or with a failing listener, an off ledger that stays silent, and what a day's report says in a
 * currency other than roubles, with rows listed in their dimensions' order.
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { LedgerOptions } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { methodStatsFixture, NOON, rub } from '../../test/support/method-stats.fixture.js';
import { FakeUsage, ledgerOn as ledgerWith, NO_EMITTER } from '../../test/support/ledger.fixture.js';
import { LEDGER_FINAL_AFTER_MS } from './verification-ledger.service.js';

const TODAY = '2026-03-15';
const DAY = 86_400_000;
const FINAL = Date.UTC(2026, 2, 16) + LEDGER_FINAL_AFTER_MS;
let now = NOON;
const { session } = methodStatsFixture(() => now);

function ledgerOn(
  store: VerificationStore,
  usage: FakeUsage,
  ledger: LedgerOptions | false = {},
  emitter?: EventEmitter2 | typeof NO_EMITTER,
) {
  return ledgerWith(store, usage, () => now, ledger, undefined, emitter);
}

/** The store with one of its methods failing while `down` is true. */
function flaky(store: MemoryStore, method: 'get' | 'set' | 'increment' | 'setIfAbsent') {
  const state = { down: false, when: (_key: string) => true };
  const broken = Object.create(store) as MemoryStore;
  const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
  (broken as unknown as Record<string, unknown>)[method] = (...args: unknown[]) =>
    state.down && state.when(String(args[0])) ? Promise.reject(new Error('store down')) : original(...args);
  return { store: broken, state };
}

describe('VerificationLedger: outages', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
  });
  afterEach(() => store.close());

  it('a count the store refuses is logged by method and never thrown', async () => {
    const { store: broken, state } = flaky(store, 'setIfAbsent');
    const { ledger, logs } = ledgerOn(broken, usage);
    state.down = true;
    await expect(
      ledger.count(session({ requestId: 'req-lost', method: 'msgr1_otp' })),
    ).resolves.toBeUndefined();
    expect(logs).toStrictEqual([
      expect.stringMatching(
        /^warn ledger: a session transition could not be counted .*method=msgr1_otp.*request_id=req-lost.*store down/,
      ),
    ]);
  });

  it('a row whose slot could not be written gets one at its next session; the lost count stays lost and leaves no empty row', async () => {
    const { store: broken, state } = flaky(store, 'set');
    state.when = (key) => key.includes(':slot:');
    const { ledger, logs } = ledgerOn(broken, usage);
    const lost = session({ method: 'msgr1_otp', cost: rub(0.9), phoneNumber: '+79851000001' });
    state.down = true;
    await ledger.count(lost);
    expect(logs).toHaveLength(1);
    state.down = false;
    // Seen again (a poll): its transitions were claimed by the failed count, so nothing is counted twice.
    await ledger.count(lost);
    expect((await ledger.report(TODAY)).rows).toStrictEqual([]);
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9), phoneNumber: '+79851000002' }));
    expect((await ledger.report(TODAY)).rows).toStrictEqual([
      expect.objectContaining({ method: 'msgr1_otp', prefix: '+7985', started: 1, expected: 0.9 }),
    ]);
  });

  it('a balance reading the store cannot compare is logged and never thrown', async () => {
    const { store: broken, state } = flaky(store, 'get');
    const { ledger, logs, events } = ledgerOn(broken, usage);
    state.down = true;
    await expect(ledger.balanceRead(rub(10))).resolves.toBeUndefined();
    expect(logs).toStrictEqual([
      expect.stringMatching(/^warn ledger: a balance reading could not be compared .*store down/),
    ]);
    expect(events).toStrictEqual([]);
  });

  it('a closed day the store cannot read is logged at the tick, which never throws', async () => {
    const { store: broken, state } = flaky(store, 'get');
    const { ledger, logs } = ledgerOn(broken, usage);
    now = FINAL;
    state.down = true;
    await expect(ledger.reconcileClosedDay()).resolves.toBeUndefined();
    expect(logs).toStrictEqual([
      expect.stringMatching(/^warn ledger: a closed day could not be reconciled .*store down/),
    ]);
  });

  it('an off ledger is silent: no warning from its readings or its tick, and its report names where', async () => {
    const { ledger, logs } = ledgerOn(store, usage, false);
    await ledger.balanceRead(rub(10));
    await ledger.balanceRead(rub(5));
    now = FINAL;
    await ledger.reconcileClosedDay();
    expect(logs).toStrictEqual([]);
    await expect(ledger.report(TODAY)).rejects.toThrow(
      'ledger.report: the ledger is off (give the "ledger" option, {} for the defaults)',
    );
    await expect(ledger.csv(TODAY)).rejects.toThrow('ledger.report: the ledger is off');
  });
});

describe('VerificationLedger: the drift as the host hears it', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  beforeEach(async () => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
  });
  afterEach(() => store.close());

  async function driftOn(emitter?: EventEmitter2 | typeof NO_EMITTER) {
    const on = ledgerOn(store, usage, { tolerance: 0.5 }, emitter);
    await on.ledger.count(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    usage.charged.set(TODAY, 2.9);
    now = FINAL;
    return on;
  }

  it('is logged as a warning with its figures, and its event has no registration key when unnamed', async () => {
    const { ledger, logs, events } = await driftOn();
    await ledger.report(TODAY);
    expect(logs).toStrictEqual([
      expect.stringMatching(
        /^warn ledger drift: the API charged other than the billing rules say .*source=usage.*date=2026-03-15.*expected=0\.9.*charged=2\.9.*currency=RUB/,
      ),
    ]);
    expect(events).toHaveLength(1);
    expect(Object.keys(events[0]!).sort()).toStrictEqual(
      ['charged', 'currency', 'date', 'drift', 'event', 'expected', 'source', 'tolerance'].sort(),
    );
  });

  it('a host without the event emitter still gets its report, the drift logged', async () => {
    const { ledger, logs } = await driftOn(NO_EMITTER);
    await expect(ledger.report(TODAY)).resolves.toMatchObject({
      drift: 2,
      beyondTolerance: true,
      final: true,
    });
    expect(logs).toStrictEqual([expect.stringMatching(/^warn ledger drift/)]);
  });

  it('a failing listener is logged as an error by its name (its message is the host’s); the report stands', async () => {
    const emitter = new EventEmitter2();
    emitter.on('verification.ledger_drift', () => Promise.reject(new Error('listener down')));
    const { ledger, logs } = await driftOn(emitter);
    await expect(ledger.report(TODAY)).resolves.toMatchObject({ drift: 2 });
    expect(logs).toStrictEqual([
      expect.stringMatching(/^warn ledger drift/),
      expect.stringMatching(/^error a ledger_drift listener failed error=Error\b/),
    ]);
    expect(logs.join('\n')).not.toContain('listener down');
  });
});

describe('VerificationLedger: a day’s report', () => {
  let store: MemoryStore;
  let usage: FakeUsage;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    usage = new FakeUsage();
  });
  afterEach(() => store.close());

  it('is in the currency charged, else the usage’s, else roubles', async () => {
    const { ledger } = ledgerOn(store, usage);
    usage.failing = true;
    expect((await ledger.report(TODAY)).currency).toBe('RUB');
    usage.failing = false;
    usage.currency = 'KZT';
    now += 60_000;
    expect((await ledger.report(TODAY)).currency).toBe('KZT');
    await ledger.count(session({ method: 'msgr1_otp', cost: { amount: 0.5, currency: 'USD' } }));
    expect((await ledger.report(TODAY)).currency).toBe('USD');
    expect(await ledger.csv(TODAY)).toContain(',0.5,,USD\r\n');
  });

  it('lists its rows by method, then prefix, whatever order they came in', async () => {
    const { ledger } = ledgerOn(store, usage);
    const rows: [string, string][] = [
      ['sms', '+79851234567'],
      ['msgr1_otp', '+79161234567'],
      ['sms', '+79121234567'],
      ['flash_call', '+79031234567'],
      ['msgr1_otp', '+79031234567'],
    ];
    for (const [method, phoneNumber] of rows) await ledger.count(session({ method, phoneNumber }));
    expect((await ledger.report(TODAY)).rows.map((r) => `${r.method} ${r.prefix}`)).toStrictEqual([
      'flash_call +7903',
      'msgr1_otp +7903',
      'msgr1_otp +7916',
      'sms +7912',
      'sms +7985',
    ]);
  });
});

describe('VerificationLedger: a balance watched for longer than the charge counter lives', () => {
  it('a counter that started again after 400 days without a charge is no drift', async () => {
    now = NOON;
    const store = new MemoryStore({ clock: () => now });
    const { ledger, events } = ledgerOn(store, new FakeUsage(), { tolerance: 0.5 });
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(5) }));
    await ledger.balanceRead(rub(100));
    // The watch reads the balance daily; no session is charged for 400 days, so the counter lapses.
    for (let day = 1; day <= 401; day += 1) {
      now = NOON + day * DAY;
      await ledger.balanceRead(rub(100));
    }
    await ledger.count(session({ method: 'msgr1_otp', cost: rub(1) }));
    await ledger.balanceRead(rub(99));
    await ledger.balanceRead(rub(99));
    expect(events).toStrictEqual([]);
    store.close();
  });
});
