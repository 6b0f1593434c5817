import { afterEach, describe, expect, it, jest } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { VerificationApiError } from '../api/verification-api.error.js';
import {
  VerificationOpsEventName,
  type BalanceEvent,
  type LedgerDriftEvent,
} from '../core/verification-events.js';
import type { UsageReads } from '../ledger/usage-reads.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import type { VerificationModuleOptions } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { CapturingLogger } from '../../test/support/log-capture.js';
import { telemetryOf } from '../../test/support/telemetry.js';
import { VerificationBalanceWatch } from './balance-watch.service.js';
import type { VerificationAccountService } from './verification-account.service.js';

/*
 * The balance watch's rules read one reading at a time (checkNow; the timer's ticks are
 * test/operations/balance-watch.e2e's): `verification.balance_low` once per crossing below the
 * threshold, not at it, re-armed at or above it, once across instances; zero or less is low without a
 * threshold; a store it cannot reach; a 402's `verification.balance_insufficient` with the amount.
 */

const stores: MemoryStore[] = [];
afterEach(() => {
  stores.splice(0).forEach((s) => s.close());
  jest.useRealTimers();
});

function shared() {
  const state = {
    /** The store's clock. */
    now: Date.now(),
    /** The next readings' answer: an amount, a failure, or one the spec settles (`Promise`). */
    amount: 100 as number | Error | Promise<number>,
    events: [] as BalanceEvent[],
    reads: 0,
  };
  const store = new MemoryStore({ clock: () => state.now });
  stores.push(store);
  return Object.assign(state, { store });
}

function instance(
  s: ReturnType<typeof shared>,
  options: Partial<VerificationModuleOptions> = {},
  /** The module's ledger, when `options` keep one: its day's usage as the API gives it. */
  usage?: UsageReads,
) {
  const host = new CapturingLogger();
  const resolved = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    logger: host,
    ...options,
  });
  const emitter = new EventEmitter2();
  for (const name of [VerificationOpsEventName.balanceLow, VerificationOpsEventName.balanceInsufficient])
    emitter.on(name, (e: BalanceEvent) => void s.events.push(e));
  const account = {
    getBalance: () => {
      s.reads += 1;
      if (s.amount instanceof Error) return Promise.reject(s.amount);
      return Promise.resolve(s.amount).then((amount) => ({ amount, currency: 'RUB' }));
    },
  } as unknown as VerificationAccountService;
  const telemetry = telemetryOf(new VerificationLogger(resolved), undefined, emitter);
  const ledger = usage && new VerificationLedger(resolved, s.store, telemetry, usage);
  const drifts: LedgerDriftEvent[] = [];
  emitter.on(VerificationOpsEventName.ledgerDrift, (e: LedgerDriftEvent) => void drifts.push(e));
  return {
    watch: new VerificationBalanceWatch(resolved, s.store, account, telemetry, ledger),
    lines: host.lines,
    drifts,
  };
}

const watched = { balanceWatch: { intervalMs: 60_000, threshold: 50 } };
const low = (amount: number) => ({
  event: 'verification.balance_low',
  amount,
  currency: 'RUB',
  threshold: 50,
});

describe('VerificationBalanceWatch: the threshold', () => {
  it('announces a crossing below once, not at the threshold, and again after the balance came back', async () => {
    const s = shared();
    const { watch, lines } = instance(s, watched);
    s.amount = 50;
    expect(await watch.checkNow()).toStrictEqual({ amount: 50, currency: 'RUB', threshold: 50, low: false });
    s.amount = 49.99;
    expect((await watch.checkNow()).low).toBe(true);
    s.amount = 10;
    await watch.checkNow();
    expect(s.events).toStrictEqual([low(49.99)]);
    expect(lines.filter((l) => l.startsWith('warn balance below threshold'))).toHaveLength(1);
    s.amount = 50;
    await watch.checkNow();
    s.amount = 20;
    await watch.checkNow();
    expect(s.events).toStrictEqual([low(49.99), low(20)]);
  });

  it('several instances sharing a store announce a crossing once between them', async () => {
    const s = shared();
    const a = instance(s, watched);
    const b = instance(s, watched);
    s.amount = 30;
    await Promise.all([a.watch.checkNow(), b.watch.checkNow()]);
    expect(s.events).toStrictEqual([low(30)]);
  });

  it('without a threshold: nothing announced; a balance at zero or below reads low all the same', async () => {
    const s = shared();
    const { watch } = instance(s);
    s.amount = 0;
    expect(await watch.checkNow()).toStrictEqual({
      amount: 0,
      currency: 'RUB',
      threshold: undefined,
      low: true,
    });
    s.amount = 0.01;
    expect((await watch.checkNow()).low).toBe(false);
    s.amount = -5;
    expect((await watch.checkNow()).low).toBe(true);
    expect(s.events).toStrictEqual([]);
  });

  it('a store it cannot reach: the reading stands, the crossing waits for the next reading (logged)', async () => {
    const s = shared();
    const { watch, lines } = instance(s, watched);
    s.store.close();
    s.amount = 10;
    expect((await watch.checkNow()).low).toBe(true);
    expect(s.events).toStrictEqual([]);
    expect(lines.filter((l) => l.startsWith('warn balance watch could not reach the store'))).toHaveLength(1);
  });

  it('a balance it cannot read rejects with the API client’s error', async () => {
    const s = shared();
    const { watch } = instance(s, watched);
    const refused = new VerificationApiError({ operation: 'getBalance', status: 503 });
    s.amount = refused;
    await expect(watch.checkNow()).rejects.toBe(refused);
  });
});

describe('VerificationBalanceWatch: a 402 on a start', () => {
  it('announces balance_insufficient per 402 with the amount read now; other failures announce nothing', async () => {
    const s = shared();
    const { watch, lines } = instance(s, watched);
    s.amount = 3;
    await watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 500 }));
    await watch.noteUpstreamFailure(new Error('402'));
    expect(s.events).toStrictEqual([]);
    await watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 402 }));
    const insufficient = {
      event: 'verification.balance_insufficient',
      amount: 3,
      currency: 'RUB',
      threshold: 50,
    };
    expect(s.events).toStrictEqual([low(3), insufficient]);
    expect(lines.filter((l) => l.startsWith('error balance insufficient'))).toHaveLength(1);
    // A reading of the last 5 s is reused: a second 402 at once reads nothing more.
    const reads = s.reads;
    await watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 402 }));
    expect(s.reads).toBe(reads);
    expect(s.events).toStrictEqual([low(3), insufficient, insufficient]);
  });

  it('without a reading (the balance cannot be read): the amount is null, in RUB', async () => {
    const s = shared();
    const { watch } = instance(s);
    s.amount = new Error('down');
    await watch.reportInsufficient();
    expect(s.events).toStrictEqual([
      { event: 'verification.balance_insufficient', amount: null, currency: 'RUB', threshold: undefined },
    ]);
  });
});

describe('VerificationBalanceWatch: readings out of order, the reminder, the log lines', () => {
  it('a slower, older reading is dropped: the newer one decides the crossing', async () => {
    const s = shared();
    const { watch } = instance(s, watched);
    let settleOld: (amount: number) => void = () => {};
    s.amount = new Promise<number>((resolve) => (settleOld = resolve));
    const older = watch.checkNow();
    s.amount = 100;
    await watch.checkNow();
    settleOld(10);
    expect((await older).low).toBe(true);
    expect(s.events).toStrictEqual([]);
  });

  it('a balance that stays low is announced again after 7 days on the store clock, not a tick before', async () => {
    const s = shared();
    const { watch } = instance(s, watched);
    s.amount = 10;
    await watch.checkNow();
    s.now += 7 * 24 * 3_600_000 - 1;
    await watch.checkNow();
    expect(s.events).toStrictEqual([low(10)]);
    s.now += 1;
    await watch.checkNow();
    expect(s.events).toStrictEqual([low(10), low(10)]);
  });

  it('its warnings and errors carry the amount, the threshold and the cause', async () => {
    const s = shared();
    const { watch, lines } = instance(s, watched);
    s.amount = 10;
    await watch.checkNow();
    await watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 402 }));
    s.store.close();
    await watch.checkNow();
    expect(lines.find((l) => l.startsWith('warn balance below threshold'))).toMatch(
      /amount=10 currency=RUB threshold=50/,
    );
    expect(lines.find((l) => l.startsWith('error balance insufficient'))).toMatch(/amount=10 currency=RUB/);
    expect(lines.find((l) => l.startsWith('warn balance watch could not reach the store'))).toMatch(/error=/);
  });
});

describe('VerificationBalanceWatch: on the module’s timers', () => {
  const T = Date.parse('2026-11-30T12:00:00Z');

  it('reads at boot and every intervalMs until the module is destroyed; a failed read is logged', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    const { watch, lines } = instance(s, watched);
    watch.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(0);
    expect(s.reads).toBe(1);
    await jest.advanceTimersByTimeAsync(60_000 - 1);
    expect(s.reads).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(s.reads).toBe(2);
    expect(lines).toStrictEqual([]);
    s.amount = new Error('api down');
    await jest.advanceTimersByTimeAsync(60_000);
    expect(lines.filter((l) => l.startsWith('warn balance watch could not read the balance'))).toStrictEqual([
      expect.stringContaining('api down'),
    ]);
    await watch.onModuleDestroy();
    await jest.advanceTimersByTimeAsync(180_000);
    expect(s.reads).toBe(3);
  });

  it('one read at a time: a read slower than intervalMs is not stacked; a non-Error failure is logged as unknown', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    const { watch, lines } = instance(s, watched);
    let fail: (reason: unknown) => void = () => {};
    s.amount = new Promise<number>((_, reject) => (fail = reject));
    watch.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(180_000);
    expect(s.reads).toBe(1);
    fail('down');
    await jest.advanceTimersByTimeAsync(0);
    expect(lines).toStrictEqual([
      expect.stringMatching(/^warn balance watch could not read the balance.* error="unknown error"/),
    ]);
    s.amount = 100;
    await jest.advanceTimersByTimeAsync(60_000);
    expect(s.reads).toBe(2);
    await watch.onModuleDestroy();
  });

  it('its tick reconciles the ledger’s closed day once final: a drift is announced, no report asked', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    // The API charged 3 RUB yesterday that the ledger counted nothing for; yesterday is final.
    const usage = {
      recent: () =>
        Promise.resolve({ chargedMinor: 300, currency: 'RUB', verifications: 1, verified: 1, at: s.now }),
    } as unknown as UsageReads;
    const { watch, drifts } = instance(s, { ...watched, ledger: {} }, usage);
    watch.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(0);
    expect(drifts).toStrictEqual([
      expect.objectContaining({ source: 'usage', date: '2026-11-29', charged: 3, expected: 0 }),
    ]);
    await watch.onModuleDestroy();
  });

  it('a 402 answered by a fresh reading leaves no timer running behind it', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    const { watch } = instance(s, watched);
    const timers = jest.getTimerCount();
    await watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 402 }));
    expect(s.events.map((e) => e.amount)).toStrictEqual([100]);
    expect(jest.getTimerCount()).toBe(timers);
  });

  it('without balanceWatch nothing is read', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    const { watch } = instance(s);
    watch.onApplicationBootstrap();
    await jest.advanceTimersByTimeAsync(120_000);
    expect(s.reads).toBe(0);
    await watch.onModuleDestroy();
  });

  it('a 402 reuses a reading of the last 5 s (real time), not one a tick older; waits 2 s at most for a new one', async () => {
    jest.useFakeTimers({ now: T });
    const s = shared();
    const { watch } = instance(s, watched);
    const refusal = () =>
      watch.noteUpstreamFailure(new VerificationApiError({ operation: 'initiate', status: 402 }));
    await watch.checkNow();
    jest.setSystemTime(T + 4_999);
    await refusal();
    expect(s.reads).toBe(1);
    jest.setSystemTime(T + 5_000);
    s.amount = new Promise<number>(() => {});
    const waiting = refusal();
    await jest.advanceTimersByTimeAsync(2_000);
    await waiting;
    expect(s.reads).toBe(2);
    expect(s.events.map((e) => e.amount)).toStrictEqual([100, null]);
  });
});
