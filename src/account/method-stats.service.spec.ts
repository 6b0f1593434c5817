import { describe, expect, it, jest } from '@jest/globals';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { STATS_FLUSH_INTERVAL_MS } from './method-stats.service.js';

const fx = methodStatsSuite();
const { session, logger, statsOn } = fx;

describe('MethodStats: figures an attacker cannot steer (issue 29, finding 6)', () => {
  it('abandoned starts repeated on a few numbers by a few callers count once per number, and name few callers', async () => {
    // Real users: 30 reverse flash calls from 30 callers, 27 verified.
    for (let i = 0; i < 30; i++) {
      const record = session({ method: 'reverse_flash_call', cost: rub(0.25) });
      await fx.stats.tally(record, `client:user-${i}`);
      if (i < 27) await fx.stats.tally({ ...record, status: 'verified', verifiedAt: fx.now + 10_000 });
    }
    // The attack: 728 abandoned starts on 4 numbers from 3 addresses.
    for (let i = 0; i < 728; i++) {
      const record = session({ method: 'reverse_flash_call', phoneNumber: `+7912000000${i % 4}` });
      await fx.stats.tally(record, `client:attacker-${i % 3}`);
      await fx.stats.tally({ ...record, status: 'expired' });
    }
    const figures = (await fx.stats.figures()).reverse_flash_call!;
    expect(figures).toMatchObject({ started: 34, verified: 27, expired: 4, callers: 33 });
  });

  it('leaves out a session whose start the pumping defence suspected', async () => {
    const record = session({ suspected: true });
    await fx.stats.tally(record, 'client:a');
    await fx.stats.tally({ ...record, status: 'expired' });
    await fx.stats.tally(session(), 'client:b');
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, expired: 0, callers: 1 });
  });
});

describe('MethodStats: each transition counted once, by method and calling code', () => {
  it('a tally nobody waited for (the start path answers first) is in the figures read right after it, and in the store after a flush', async () => {
    void fx.stats.tally(session(), 'client:a');
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, callers: 1 });
    void fx.stats.tally(session(), 'client:b');
    await fx.stats.flush();
    const other = statsOn(fx.store);
    expect((await other.figures()).sms).toMatchObject({ started: 2, callers: 2 });
  });

  it('counts started, delivered and the outcome once, however often the same state is tallied', async () => {
    const record = session();
    const delivered = { ...record, status: 'delivered', delivered: true };
    const verified = { ...delivered, status: 'verified', verifiedAt: fx.now + 20_000 };
    for (const state of [record, record, delivered, delivered, verified, verified, verified])
      await fx.stats.tally(state);
    expect((await fx.stats.figures()).sms).toMatchObject({
      started: 1,
      delivered: 1,
      verified: 1,
      expired: 0,
      failed: 0,
      charged: rub(3),
    });
  });

  it('two instances on one store tallying the same states at once count each transition once', async () => {
    const other = statsOn(fx.store);
    const records = Array.from({ length: 20 }, () => session({ method: 'msgr1_otp', cost: rub(0.9) }));
    const done = records.map((r, i) => ({
      ...r,
      status: i % 2 === 0 ? 'verified' : 'failed',
      delivered: i % 2 === 0,
      verifiedAt: i % 2 === 0 ? fx.now + 1000 : null,
    }));
    await Promise.all([
      ...done.map((r) => fx.stats.tally(r)),
      ...done.map((r) => other.tally(r)),
      ...records.map((r) => other.tally(r)),
    ]);
    await fx.stats.flush();
    expect((await other.figures()).msgr1_otp).toMatchObject({
      started: 20,
      delivered: 10,
      verified: 10,
      failed: 10,
      charged: rub(18),
      verifiedRate: 0.5,
      costPerVerified: rub(1.8),
    });
  });

  it('claims each count at once and adds what it counted to the store in one batch per flush', async () => {
    const calls: string[] = [];
    const watched = new Proxy(fx.store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(property));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const counter = statsOn(watched);
    const first = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await counter.tally(first);
    await counter.tally(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    // Only each number's admission (read the decision, claim the number, remember the decision: the
    // start's claim too) so far: another instance reads nothing yet.
    const admitted = ['get', 'setIfAbsent', 'setIfAbsent'];
    expect(calls.filter((c) => c !== 'now')).toStrictEqual([...admitted, ...admitted]);
    expect(await fx.stats.figures()).toStrictEqual({});

    const claimed = calls.length;
    await counter.flush();
    // Two sessions' started and charged counts, each in its country and in all: four counters; their
    // starts in the five figure cells of their operator, country and device (no money there); and the currency.
    expect(
      calls
        .slice(claimed)
        .filter((c) => c !== 'now')
        .sort(),
    ).toStrictEqual([...Array<string>(9).fill('increment'), 'set']);
    expect((await fx.stats.figures()).msgr1_otp).toMatchObject({ started: 2, charged: rub(1.8) });

    // Observed again: claimed already, so nothing more is counted.
    await counter.tally({ ...first, status: 'verified', verifiedAt: fx.now + 1000 });
    await counter.onModuleDestroy(); // the module's shutdown flushes
    expect((await fx.stats.figures()).msgr1_otp).toMatchObject({
      started: 2,
      verified: 1,
      charged: rub(1.8),
    });
  });

  it('an observation that counted first is not counted again by the start path', async () => {
    const raced = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await fx.stats.tally({ ...raced, status: 'verified', delivered: true, verifiedAt: fx.now + 1000 });
    await fx.stats.tally(raced);
    expect((await fx.stats.figures()).msgr1_otp).toMatchObject({
      started: 1,
      verified: 1,
      charged: rub(0.9),
    });
  });

  it('adds its counts to the store by itself within the flush interval', async () => {
    const counter = statsOn(fx.store);
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      await counter.tally(session());
      expect(await fx.stats.figures()).toStrictEqual({});
      await jest.advanceTimersByTimeAsync(STATS_FLUSH_INTERVAL_MS - 1);
      expect(await fx.stats.figures()).toStrictEqual({});
      await jest.advanceTimersByTimeAsync(1);
      expect((await fx.stats.figures()).sms).toMatchObject({ started: 1 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('a batch the store refuses is logged and lost, never counted twice', async () => {
    const warnings: string[] = [];
    const log = logger();
    log.warn = (message: string) => void warnings.push(message);
    const down = new Proxy(fx.store, {
      get(target, property, receiver) {
        if (property === 'increment') return () => Promise.reject(new Error('store down'));
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const failing = statsOn(down, { logger: log });
    const record = session();
    await failing.tally(record);
    await failing.flush();
    expect(warnings).toStrictEqual(['method figures: counts could not be added to the store']);
    await failing.tally(record); // claimed: not added again
    await fx.stats.tally(record);
    await failing.flush();
    expect(await fx.stats.figures()).toStrictEqual({});
  });
});
