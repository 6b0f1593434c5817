import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Registry } from 'prom-client';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationLogger } from '../observability/verification-logger.js';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { resolveVerificationOptions } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { callingCodeOf } from './method-figures.js';
import { MethodStats, STATS_FLUSH_INTERVAL_MS } from './method-stats.service.js';

const DAY = 86_400_000;
/** Noon UTC, so that a few minutes either way stay on the same day. */
const NOON = Date.UTC(2026, 2, 15, 12);
const rub = (amount: number) => ({ amount, currency: 'RUB' });

let now = NOON;
let seq = 0;
function session(overrides: Partial<SessionRecord> = {}): SessionRecord {
  seq += 1;
  return {
    requestId: `req-${seq}`,
    // A number of its own: the figures count a number's first session of the day only.
    phoneNumber: `+79123${String(seq).padStart(6, '0')}`,
    method: 'sms',
    status: 'sent',
    awaitingCode: true,
    createdAt: now,
    expiresAt: now + 300_000,
    verifiedAt: null,
    cost: rub(3),
    ...overrides,
  };
}

function logger(): VerificationLogger {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => now,
  });
  return new VerificationLogger({ ...options, logLevels: false });
}

describe('MethodStats: figures an attacker cannot steer (issue 29, finding 6)', () => {
  let store: MemoryStore;
  let stats: MethodStats;
  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    stats = new MethodStats(store, VerificationMetrics.disabled(), logger());
  });
  afterEach(() => store.close());

  it('abandoned starts repeated on a few numbers by a few callers count once per number, and name few callers', async () => {
    // Real users: 30 reverse flash calls from 30 callers, 27 verified.
    for (let i = 0; i < 30; i++) {
      const record = session({ method: 'reverse_flash_call', cost: rub(0.25) });
      await stats.tally(record, `client:user-${i}`);
      if (i < 27) await stats.tally({ ...record, status: 'verified', verifiedAt: now + 10_000 });
    }
    // The attack: 728 abandoned starts on 4 numbers from 3 addresses.
    for (let i = 0; i < 728; i++) {
      const record = session({ method: 'reverse_flash_call', phoneNumber: `+7912000000${i % 4}` });
      await stats.tally(record, `client:attacker-${i % 3}`);
      await stats.tally({ ...record, status: 'expired' });
    }
    const figures = (await stats.figures()).reverse_flash_call!;
    expect(figures).toMatchObject({ started: 34, verified: 27, expired: 4, callers: 33 });
  });

  it('leaves out a session whose start the pumping defence suspected', async () => {
    const record = session({ suspected: true });
    await stats.tally(record, 'client:a');
    await stats.tally({ ...record, status: 'expired' });
    await stats.tally(session(), 'client:b');
    expect((await stats.figures()).sms).toMatchObject({ started: 1, expired: 0, callers: 1 });
  });
});

describe('MethodStats: each transition counted once, by method and calling code', () => {
  let store: MemoryStore;
  let stats: MethodStats;

  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    stats = new MethodStats(store, VerificationMetrics.disabled(), logger());
  });
  afterEach(() => store.close());

  /** Plays a session's life: start, then each state the tracker would store, each tallied. */
  async function live(record: SessionRecord, ...states: Partial<SessionRecord>[]): Promise<SessionRecord> {
    let current = record;
    await stats.tally(current);
    for (const state of states) {
      current = { ...current, ...state };
      await stats.tally(current);
    }
    return current;
  }

  it('counts started, delivered and the outcome once, however often the same state is tallied', async () => {
    const record = session();
    const delivered = { ...record, status: 'delivered', delivered: true };
    const verified = { ...delivered, status: 'verified', verifiedAt: now + 20_000 };
    for (const state of [record, record, delivered, delivered, verified, verified, verified])
      await stats.tally(state);
    expect((await stats.figures()).sms).toMatchObject({
      started: 1,
      delivered: 1,
      verified: 1,
      expired: 0,
      failed: 0,
      charged: rub(3),
    });
  });

  it('two instances on one store tallying the same states at once count each transition once', async () => {
    const other = new MethodStats(store, VerificationMetrics.disabled(), logger());
    const records = Array.from({ length: 20 }, () => session({ method: 'msgr1_otp', cost: rub(0.9) }));
    const done = records.map((r, i) => ({
      ...r,
      status: i % 2 === 0 ? 'verified' : 'failed',
      delivered: i % 2 === 0,
      verifiedAt: i % 2 === 0 ? now + 1000 : null,
    }));
    await Promise.all([
      ...done.map((r) => stats.tally(r)),
      ...done.map((r) => other.tally(r)),
      ...records.map((r) => other.tally(r)),
    ]);
    await stats.flush();
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
    const watched = new Proxy(store, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          calls.push(String(property));
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const counter = new MethodStats(watched, VerificationMetrics.disabled(), logger());
    const first = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await counter.tally(first);
    await counter.tally(session({ method: 'msgr1_otp', cost: rub(0.9) }));
    // Only each number's admission (read the decision, claim the number, remember the decision) and
    // the claims so far: another instance reads nothing yet.
    const admitted = ['get', 'setIfAbsent', 'set', 'setIfAbsent'];
    expect(calls.filter((c) => c !== 'now')).toEqual([...admitted, ...admitted]);
    expect(await stats.figures()).toEqual({});

    const claimed = calls.length;
    await counter.flush();
    // Two sessions' started and charged counts, each in its country and in all: four counters, and the currency.
    expect(
      calls
        .slice(claimed)
        .filter((c) => c !== 'now')
        .sort(),
    ).toEqual(['increment', 'increment', 'increment', 'increment', 'set']);
    expect((await stats.figures()).msgr1_otp).toMatchObject({ started: 2, charged: rub(1.8) });

    // Observed again: claimed already, so nothing more is counted.
    await counter.tally({ ...first, status: 'verified', verifiedAt: now + 1000 });
    await counter.onModuleDestroy(); // the module's shutdown flushes
    expect((await stats.figures()).msgr1_otp).toMatchObject({ started: 2, verified: 1, charged: rub(1.8) });
  });

  it('an observation that counted first is not counted again by the start path', async () => {
    const raced = session({ method: 'msgr1_otp', cost: rub(0.9) });
    await stats.tally({ ...raced, status: 'verified', delivered: true, verifiedAt: now + 1000 });
    await stats.tally(raced);
    expect((await stats.figures()).msgr1_otp).toMatchObject({ started: 1, verified: 1, charged: rub(0.9) });
  });

  it('adds its counts to the store by itself within the flush interval', async () => {
    const counter = new MethodStats(store, VerificationMetrics.disabled(), logger());
    jest.useFakeTimers({ doNotFake: ['nextTick', 'queueMicrotask', 'setImmediate'] });
    try {
      await counter.tally(session());
      expect(await stats.figures()).toEqual({});
      await jest.advanceTimersByTimeAsync(STATS_FLUSH_INTERVAL_MS - 1);
      expect(await stats.figures()).toEqual({});
      await jest.advanceTimersByTimeAsync(1);
      expect((await stats.figures()).sms).toMatchObject({ started: 1 });
    } finally {
      jest.useRealTimers();
    }
  });

  it('a batch the store refuses is logged and lost, never counted twice', async () => {
    const warnings: string[] = [];
    const log = logger();
    log.warn = (message: string) => void warnings.push(message);
    const failing = new MethodStats(
      new Proxy(store, {
        get(target, property, receiver) {
          if (property === 'increment') return () => Promise.reject(new Error('store down'));
          return Reflect.get(target, property, receiver) as unknown;
        },
      }),
      VerificationMetrics.disabled(),
      log,
    );
    const record = session();
    await failing.tally(record);
    await failing.flush();
    expect(warnings).toEqual(['method figures: counts could not be added to the store']);
    await failing.tally(record); // claimed: not added again
    await stats.tally(record);
    await failing.flush();
    expect(await stats.figures()).toEqual({});
  });

  it('counts the charge at the moment the billing rule names, once', async () => {
    // sms: on delivery. One delivered and expired, one never delivered.
    await live(session(), { status: 'delivered', delivered: true }, { status: 'expired' });
    await live(session(), { status: 'expired' });
    // reverse_flash_call: only when verified.
    const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false };
    await live(session(rfc), { status: 'verified', verifiedAt: now + 30_000 });
    await live(session(rfc), { status: 'expired' });
    // msgr1_otp: at initiation, whatever came after.
    await live(session({ method: 'msgr1_otp', cost: rub(0.9) }), { status: 'expired' });
    // A method this version does not know: at initiation (the conservative rule), under `other`.
    await live(session({ method: 'whatsapp_otp', cost: rub(1.1) }));

    const figures = await stats.figures();
    expect(figures.sms).toMatchObject({ started: 2, delivered: 1, expired: 2, charged: rub(3) });
    expect(figures.sms!.costPerVerified).toBeNull();
    expect(figures.reverse_flash_call).toMatchObject({
      started: 2,
      delivered: 0,
      verified: 1,
      expired: 1,
      charged: rub(0.25),
      costPerVerified: rub(0.25),
      verifiedRate: 0.5,
    });
    expect(figures.msgr1_otp).toMatchObject({ started: 1, expired: 1, charged: rub(0.9) });
    expect(figures.other).toMatchObject({ started: 1, charged: rub(1.1) });
    // Methods that started nothing are absent.
    expect(Object.keys(figures).sort()).toEqual(['msgr1_otp', 'other', 'reverse_flash_call', 'sms']);
  });

  it('costs per verified user: everything charged over the verified ones, to the kopeck', async () => {
    for (let i = 0; i < 3; i++)
      await live(
        session(),
        { status: 'delivered', delivered: true },
        { status: i < 2 ? 'verified' : 'failed' },
      );
    expect((await stats.figures()).sms).toMatchObject({
      charged: rub(9),
      verified: 2,
      costPerVerified: rub(4.5),
    });
  });

  it('estimates the median time to verify from the buckets, from start to verification', async () => {
    for (const seconds of [3, 4, 8, 50, 400])
      await live(session(), { status: 'verified', delivered: true, verifiedAt: now + seconds * 1000 });
    // Third of five in (5 s, 10 s]: half an observation into a bucket of one, 5 s + 0.5 · 5 s.
    expect((await stats.figures()).sms!.medianTimeToVerifyMs).toBe(7_500);
    await live(session({ method: 'flash_call' }), { status: 'expired' });
    expect((await stats.figures()).flash_call!.medianTimeToVerifyMs).toBeNull();
  });

  it('sums a window of days by the day each session started, and forgets after 35 days', async () => {
    now = NOON - 31 * DAY;
    await live(session(), { status: 'verified', delivered: true, verifiedAt: now + 5000 });
    now = NOON - 29 * DAY;
    await live(session(), { status: 'expired' });
    now = NOON - 2 * DAY + 11 * 3_600_000; // late on a day: the outcome comes after midnight
    const late = await live(session());
    now += 2 * 3_600_000;
    await live(late, { status: 'verified', delivered: true, verifiedAt: now });
    now = NOON;

    expect((await stats.figures()).sms).toMatchObject({ started: 2, verified: 1, expired: 1 });
    expect((await stats.figures({ days: 35 })).sms).toMatchObject({ started: 3, verified: 2 });
    // Started at 23:00 two days ago, verified after midnight: both count on the day it started.
    expect((await stats.figures({ days: 3 })).sms).toMatchObject({ started: 1, verified: 1 });
    expect(await stats.figures({ days: 2 })).toEqual({});
    // The counters of the oldest session expire 35 days after they were written.
    now = NOON + 4 * DAY + 1;
    expect((await stats.figures({ days: 35 })).sms).toMatchObject({ started: 2 });
  });

  it('narrows to one calling code: "7", "+7", "RU" and "KZ" read the same figures; "unknown" those without one', async () => {
    await live(session({ phoneNumber: '+79123456789' }));
    await live(session({ phoneNumber: '+77012345678' }));
    await live(session({ phoneNumber: '+447911123456' }));
    await live(session({ phoneNumber: '+999123456' }));
    for (const country of ['7', '+7', 'RU', 'kz'])
      expect((await stats.figures({ country })).sms!.started).toBe(2);
    expect((await stats.figures({ country: 'GB' })).sms!.started).toBe(1);
    expect((await stats.figures({ country: 'unknown' })).sms!.started).toBe(1);
    expect(await stats.figures({ country: '1' })).toEqual({});
    expect((await stats.figures()).sms!.started).toBe(4);
    expect(callingCodeOf('+447911123456')).toBe('44');
    expect(callingCodeOf('not a number')).toBe('unknown');
  });

  it('refuses a bad window or country with a RangeError', async () => {
    for (const days of [0, 36, 1.5, -1, Number.NaN])
      await expect(stats.figures({ days })).rejects.toThrow(RangeError);
    for (const country of ['', 'XX', 'Russia', '+', '0', '1234', '7;DROP'])
      await expect(stats.figures({ country })).rejects.toThrow(RangeError);
  });

  it('never fails the caller: a store error loses the count and is logged without the number', async () => {
    const lines: string[] = [];
    const broken: VerificationStore = Object.create(store) as VerificationStore;
    broken.setIfAbsent = () => Promise.reject(new Error('store down'));
    const quiet = logger();
    quiet.warn = (message, fields) => void lines.push(`${message} ${JSON.stringify(fields)}`);
    const failing = new MethodStats(broken, VerificationMetrics.disabled(), quiet);
    await expect(failing.tally(session())).resolves.toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('could not be counted');
    expect(lines[0]).not.toContain('9123456789');
  });

  it('reports each counted transition to Prometheus once, with the calling code and the charge', async () => {
    const registry = new Registry();
    const metrics = await VerificationMetrics.create({ enabled: true, registry, prefix: 'unit_' });
    const counted = new MethodStats(store, metrics, logger());
    const record = session({ method: 'flash_call', cost: rub(0.8) });
    const verified = { ...record, status: 'verified', delivered: true, verifiedAt: now + 12_000 };
    for (const state of [record, verified, verified]) await counted.tally(state);
    const json = (await registry.getMetricsAsJSON()) as unknown as {
      name: string;
      values: { labels: Record<string, string>; value: number; metricName?: string }[];
    }[];
    const of = (name: string) => json.find((m) => m.name === name)!.values;
    expect(
      of('unit_method_sessions_total').map((v) => [v.labels.outcome, v.labels.country, v.value]),
    ).toEqual([
      ['started', '7', 1],
      ['delivered', '7', 1],
      ['verified', '7', 1],
    ]);
    expect(of('unit_method_charged_total')).toEqual([
      expect.objectContaining({ labels: { method: 'flash_call', currency: 'RUB' }, value: 0.8 }),
    ]);
    const histogram = of('unit_method_time_to_verify_seconds');
    expect(histogram.find((v) => v.metricName?.endsWith('_count'))!.value).toBe(1);
    expect(histogram.find((v) => v.metricName?.endsWith('_sum'))!.value).toBe(12);
  });
});
