import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { isProbeStep } from '../core/fallback-moment.js';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { methodStatsSuite, NOON, rub } from '../../test/support/method-stats.fixture.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { callingCodeOf } from './method-figures.js';

/*
 * MethodStats' answers: charges, costs, times, windows, countries, the figures the fallback moment is
 * learned from; and what happens when the store fails. (Counting each transition once:
 * method-stats.service.spec.ts.)
 */

const DAY = 86_400_000;
const fx = methodStatsSuite();
const { session, logger, statsOn } = fx;

describe('MethodStats: what the figures answer', () => {
  /** Plays a session's life: start, then each state the tracker would store, each tallied. */
  async function live(record: SessionRecord, ...states: Partial<SessionRecord>[]): Promise<SessionRecord> {
    let current = record;
    await fx.stats.tally(current);
    for (const state of states) {
      current = { ...current, ...state };
      await fx.stats.tally(current);
    }
    return current;
  }

  it('counts the charge at the moment the billing rule names, once', async () => {
    // sms: on delivery. One delivered and expired, one never delivered.
    await live(session(), { status: 'delivered', delivered: true }, { status: 'expired' });
    await live(session(), { status: 'expired' });
    // reverse_flash_call: only when verified.
    const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false };
    await live(session(rfc), { status: 'verified', verifiedAt: fx.now + 30_000 });
    await live(session(rfc), { status: 'expired' });
    // msgr1_otp: at initiation, whatever came after.
    await live(session({ method: 'msgr1_otp', cost: rub(0.9) }), { status: 'expired' });
    // A method this version does not know: at initiation (the conservative rule), under `other`.
    await live(session({ method: 'whatsapp_otp', cost: rub(1.1) }));

    const figures = await fx.stats.figures();
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
    expect(Object.keys(figures).sort()).toStrictEqual(['msgr1_otp', 'other', 'reverse_flash_call', 'sms']);
  });

  it('charges in the account’s currency from the first read; a cost the figures cannot read (negative) is charged nowhere and names no currency', async () => {
    const usd = (amount: number) => ({ amount, currency: 'USD' });
    await live(session({ cost: usd(3) }), { status: 'delivered', delivered: true });
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 1, charged: usd(3) });
    await live(session({ cost: { amount: -3, currency: 'EUR' } }), { status: 'delivered', delivered: true });
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 2, delivered: 2, charged: usd(3) });
  });

  it('costs per verified user: everything charged over the verified ones, to the kopeck', async () => {
    for (let i = 0; i < 3; i++)
      await live(
        session(),
        { status: 'delivered', delivered: true },
        { status: i < 2 ? 'verified' : 'failed' },
      );
    expect((await fx.stats.figures()).sms).toMatchObject({
      charged: rub(9),
      verified: 2,
      costPerVerified: rub(4.5),
    });
  });

  it('estimates the median time to verify from the buckets, from start to verification', async () => {
    for (const seconds of [3, 4, 8, 50, 400])
      await live(session(), { status: 'verified', delivered: true, verifiedAt: fx.now + seconds * 1000 });
    // Third of five in (5 s, 10 s]: half an observation into a bucket of one, 5 s + 0.5 · 5 s.
    expect((await fx.stats.figures()).sms!.medianTimeToVerifyMs).toBe(7_500);
    await live(session({ method: 'flash_call' }), { status: 'expired' });
    expect((await fx.stats.figures()).flash_call!.medianTimeToVerifyMs).toBeNull();
  });

  it('sums a window of days by the day each session started, and forgets after 35 days', async () => {
    fx.now = NOON - 31 * DAY;
    await live(session(), { status: 'verified', delivered: true, verifiedAt: fx.now + 5000 });
    fx.now = NOON - 29 * DAY;
    await live(session(), { status: 'expired' });
    fx.now = NOON - 2 * DAY + 11 * 3_600_000; // late on a day: the outcome comes after midnight
    const late = await live(session());
    fx.now += 2 * 3_600_000;
    await live(late, { status: 'verified', delivered: true, verifiedAt: fx.now });
    fx.now = NOON;

    expect((await fx.stats.figures()).sms).toMatchObject({ started: 2, verified: 1, expired: 1 });
    expect((await fx.stats.figures({ days: 35 })).sms).toMatchObject({ started: 3, verified: 2 });
    // Started at 23:00 two days ago, verified after midnight: both count on the day it started.
    expect((await fx.stats.figures({ days: 3 })).sms).toMatchObject({ started: 1, verified: 1 });
    expect(await fx.stats.figures({ days: 2 })).toStrictEqual({});
    // The counters of the oldest session expire 35 days after they were written.
    fx.now = NOON + 4 * DAY + 1;
    expect((await fx.stats.figures({ days: 35 })).sms).toMatchObject({ started: 2 });
  });

  it('narrows to one calling code: "7", "+7", "RU" and "KZ" read the same figures; "unknown" those without one', async () => {
    await live(session({ phoneNumber: '+79123456789' }));
    await live(session({ phoneNumber: '+77012345678' }));
    await live(session({ phoneNumber: '+447911123456' }));
    await live(session({ phoneNumber: '+999123456' }));
    for (const country of ['7', '+7', 'RU', 'kz'])
      expect((await fx.stats.figures({ country })).sms!.started).toBe(2);
    expect((await fx.stats.figures({ country: 'GB' })).sms!.started).toBe(1);
    expect((await fx.stats.figures({ country: 'unknown' })).sms!.started).toBe(1);
    expect(await fx.stats.figures({ country: '1' })).toStrictEqual({});
    expect((await fx.stats.figures()).sms!.started).toBe(4);
    expect(callingCodeOf('+447911123456')).toBe('44');
    expect(callingCodeOf('not a number')).toBe('unknown');
  });

  it('refuses a bad window or country with a RangeError', async () => {
    for (const days of [0, 36, 1.5, -1, Number.NaN])
      await expect(fx.stats.figures({ days })).rejects.toThrow(RangeError);
    for (const country of ['', 'XX', 'Russia', '+', '0', '1234', '7;DROP'])
      await expect(fx.stats.figures({ country })).rejects.toThrow(RangeError);
  });

  it('never fails the caller: a store error loses the count and is logged without the number', async () => {
    const lines: string[] = [];
    const broken: VerificationStore = Object.create(fx.store) as VerificationStore;
    broken.setIfAbsent = () => Promise.reject(new Error('store down'));
    const quiet = logger();
    quiet.warn = (message, fields) => void lines.push(`${message} ${JSON.stringify(fields)}`);
    const failing = statsOn(broken, { logger: quiet });
    await expect(failing.tally(session())).resolves.toBeUndefined();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('could not be counted');
    expect(lines[0]).not.toContain('9123456789');
  });

  it('reports each counted transition to Prometheus once, with the calling code and the charge', async () => {
    const registry = new Registry();
    const metrics = await VerificationMetrics.create({ enabled: true, registry, prefix: 'unit_' });
    const counted = statsOn(fx.store, { metrics });
    const record = session({ method: 'flash_call', cost: rub(0.8) });
    const verified = { ...record, status: 'verified', delivered: true, verifiedAt: fx.now + 12_000 };
    for (const state of [record, verified, verified]) await counted.tally(state);
    const json = (await registry.getMetricsAsJSON()) as unknown as {
      name: string;
      values: { labels: Record<string, string>; value: number; metricName?: string }[];
    }[];
    const of = (name: string) => json.find((m) => m.name === name)!.values;
    expect(
      of('unit_method_sessions_total').map((v) => [v.labels.outcome, v.labels.country, v.value]),
    ).toStrictEqual([
      ['started', '7', 1],
      ['delivered', '7', 1],
      ['verified', '7', 1],
    ]);
    expect(of('unit_method_charged_total')).toStrictEqual([
      expect.objectContaining({ labels: { method: 'flash_call', currency: 'RUB' }, value: 0.8 }),
    ]);
    const histogram = of('unit_method_time_to_verify_seconds');
    expect(histogram.find((v) => v.metricName?.endsWith('_count'))!.value).toBe(1);
    expect(histogram.find((v) => v.metricName?.endsWith('_sum'))!.value).toBe(12);
  });
});

describe('MethodStats: the figures the fallback moment is learned from', () => {
  const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false };
  const bucketOf20s = 2; // (10 s, 20 s]
  /** A page read the step's status after FOLLOWED_AFTER_MS: its unverified end is a real user's (FigureEvidence). */
  const followed = (record: SessionRecord) =>
    fx.stats.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS });
  /** Another step of the record's journey (an SMS) verified: its unverified end is a real user's. */
  const leftBehind = async (record: SessionRecord, caller: string) => {
    const next = session({ journeyId: record.journeyId ?? record.requestId });
    await fx.stats.tally(next, caller);
    await fx.stats.tally({ ...next, status: 'verified', delivered: true, verifiedAt: fx.now + 30_000 });
  };

  it('per calling code and device hint: the start’s hint goes with the session’s later counts', async () => {
    const desktop = session(rfc);
    await fx.stats.tally(desktop, 'client:a', 'desktop');
    // The tracker counts the outcome without knowing the hint.
    await fx.stats.tally({ ...desktop, status: 'verified', verifiedAt: fx.now + 15_000 });
    const mobile = session(rfc);
    await fx.stats.tally(mobile, 'client:b', 'mobile');
    await leftBehind(mobile, 'client:b');
    await fx.stats.tally({ ...mobile, status: 'expired' });
    await fx.stats.tally(session(rfc), 'client:c');

    const desk = await fx.stats.timeToVerify('reverse_flash_call', '7', 'desktop', 7);
    expect(desk.ended).toBe(1);
    expect(desk.buckets[bucketOf20s]).toBe(1);
    expect(desk.buckets.reduce((a, b) => a + b, 0)).toBe(1);
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 1 });
    expect(
      (await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).buckets.every((n) => n === 0),
    ).toBe(true);
    // Still pending: on its way, not a user who gave up (see the next test).
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', undefined, 7)).toMatchObject({ ended: 0 });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '44', 'desktop', 7)).toMatchObject({ ended: 0 });
    // The country's figures hold them all, whatever the hint.
    expect((await fx.stats.figures({ country: '7' })).reverse_flash_call).toMatchObject({
      started: 3,
      verified: 1,
    });
  });

  it('a method whose code is typed in the page: only its probe steps, which are not cut off', async () => {
    const records = Array.from({ length: 60 }, () => session({ method: 'flash_call', cost: rub(0.8) }));
    for (const record of records) {
      await fx.stats.tally(record, undefined, 'mobile');
      await fx.stats.tally({ ...record, status: 'verified', delivered: true, verifiedAt: fx.now + 15_000 });
    }
    const probes = records.filter((r) => isProbeStep('flash_call', r.requestId)).length;
    expect(probes).toBeGreaterThan(0);
    expect(probes).toBeLessThan(60);
    const figures = await fx.stats.timeToVerify('flash_call', '7', 'mobile', 7);
    expect(figures.ended).toBe(probes);
    expect(figures.buckets[bucketOf20s]).toBe(probes);
    expect((await fx.stats.figures()).flash_call).toMatchObject({ started: 60, verified: 60 });
  });

  it('a step typed in the page, left unverified because another step of its journey was verified, is taken out', async () => {
    const probes = Array.from({ length: 200 }, (_, i) => `probe-${i}`).filter((id) => isProbeStep('sms', id));
    // A journey: an SMS (a probe), then a reverse call the user is verified by; the SMS then expires.
    const sms = session({ requestId: probes[0]! });
    await fx.stats.tally(sms, 'client:a', 'mobile');
    const call = session({ ...rfc, journeyId: sms.requestId });
    await fx.stats.tally(call, 'client:a', 'mobile');
    await fx.stats.tally({ ...call, status: 'verified', verifiedAt: fx.now + 20_000 });
    await fx.stats.tally({ ...sms, status: 'expired' });
    // A journey of one SMS (a probe) that expired: a user who did not type the code.
    const lone = session({ requestId: probes[1]! });
    await fx.stats.tally(lone, 'client:b', 'mobile');
    await followed(lone);
    await fx.stats.tally({ ...lone, status: 'expired' });
    expect(await fx.stats.timeToVerify('sms', '7', 'mobile', 7)).toMatchObject({ ended: 1 });
    // Every other figure still counts both as expired.
    expect((await fx.stats.figures()).sms).toMatchObject({ started: 2, expired: 2 });

    // A reverse call is placed whatever the page shows: one left behind by a verified SMS still counts.
    const first = session(rfc);
    await fx.stats.tally(first, 'client:c', 'desktop');
    const next = session({ journeyId: first.requestId });
    await fx.stats.tally(next, 'client:c', 'desktop');
    await fx.stats.tally({ ...next, status: 'verified', delivered: true, verifiedAt: fx.now + 30_000 });
    await fx.stats.tally({ ...first, status: 'expired' });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'desktop', 7)).toMatchObject({ ended: 1 });
  });

  it('counts a step once it ended: steps still pending are users on their way, not users who gave up', async () => {
    // A fresh host's first minutes: many steps started, the fast ones verified, the rest pending.
    const records = Array.from({ length: 10 }, () => session(rfc));
    for (const [i, record] of records.entries()) await fx.stats.tally(record, `client:${i}`, 'mobile');
    for (const record of records.slice(0, 3))
      await fx.stats.tally({ ...record, status: 'verified', verifiedAt: fx.now + 8_000 });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 3 });
    for (const record of records.slice(3, 5)) await leftBehind(record, 'client:3');
    await fx.stats.tally({ ...records[3]!, status: 'expired' });
    await fx.stats.tally({ ...records[4]!, status: 'failed' });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 5 });
  });

  it('leaves out a suspected start, as every figure does', async () => {
    const record = session({ ...rfc, suspected: true });
    await fx.stats.tally(record, 'client:a', 'mobile');
    await fx.stats.tally({ ...record, status: 'verified', verifiedAt: fx.now + 5_000 });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 0 });
  });
});
