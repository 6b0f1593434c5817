import { describe, expect, it } from '@jest/globals';
import { Registry } from 'prom-client';
import { VerificationMetrics } from '../observability/verification-metrics.js';
import { isProbeStep } from '../core/fallback-moment.js';
import type { JourneyStep } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';
import { FOLLOWED_AFTER_MS } from './figure-evidence.js';
import { figureCells } from './method-figures.js';

/*
 * A step a journey switched away from ends, in the method figures, when a later step verifies the
 * journey: a real user its method failed, known then (a cold host's first minutes), not at its expiry.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;

describe('MethodStats: a journey verified by a later step ends its earlier steps then', () => {
  const stepOf = (record: SessionRecord): JourneyStep => ({
    requestId: record.requestId,
    method: record.method,
    startedAt: record.createdAt,
  });

  /** A journey started with `first` (mobile), switched after 20 s to an SMS: both steps' records. */
  async function switched(first: Partial<SessionRecord> = rfc, tellEarlier = true, stats = fx.stats) {
    const start = session(first);
    await stats.tally(start, 'client:a', 'mobile');
    fx.now += 20_000;
    const next = session({ phoneNumber: start.phoneNumber, journeyId: start.requestId });
    await stats.tally(next, 'client:a', 'mobile', {}, tellEarlier ? [stepOf(start)] : []);
    return { start, next };
  }
  const verify = (record: SessionRecord, stats = fx.stats) => {
    fx.now += 25_000;
    return stats.tally({ ...record, status: 'verified', delivered: true, verifiedAt: fx.now });
  };
  /** A reverse call switched to an SMS that verifies, counted by a MethodStats whose metrics operations read. */
  async function switchedOnMetrics(prefix: string) {
    const registry = new Registry();
    const metrics = await VerificationMetrics.create({ enabled: true, registry, prefix });
    const counted = fx.statsOn(fx.store, { metrics });
    const { start, next } = await switched(rfc, true, counted);
    await verify(next, counted);
    return { registry, counted, start };
  }
  /** The method's sums in the first of a record's cells (operator prefix × device). */
  const cell = async (record: SessionRecord, method = record.method) =>
    (await fx.stats.cellSums(method, figureCells(record.phoneNumber, 'mobile'), 7))[0]!;

  it('counts the earlier step expired and rescued when the later one verifies, before its expiry', async () => {
    const { start, next } = await switched();
    await verify(next);
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      started: 1,
      expired: 1,
      verified: 0,
    });
    expect(await cell(start)).toMatchObject({ expired: 1, rescued: 1, unproven: 0 });
    // A call completed outside the page: its moment's figures end it (users the call did not verify).
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      ended: 1,
      left: 0,
    });
    // Its own expiry, later, counts nothing more.
    fx.now = start.expiresAt;
    await fx.stats.tally({ ...start, status: 'expired' });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 1, expired: 1 });
    expect(await cell(start)).toMatchObject({ expired: 1, rescued: 1 });
  });

  it('ends each earlier step once, however often the verification is counted', async () => {
    const { start, next } = await switched();
    const verified = { ...next, status: 'verified' as const, delivered: true, verifiedAt: fx.now + 25_000 };
    await Promise.all([fx.stats.tally(verified), fx.stats.tally(verified)]);
    await fx.stats.tally(verified);
    expect(await cell(start)).toMatchObject({ expired: 1, rescued: 1 });
  });

  it('a step the user completes after the journey verified: charged, but counted no success', async () => {
    const { start, next } = await switched();
    await verify(next);
    fx.now += 5_000;
    await fx.stats.tally({ ...start, status: 'verified', verifiedAt: fx.now });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({
      verified: 0,
      expired: 1,
      charged: rub(0.25),
    });
    expect((await cell(start)).buckets.every((n) => n === 0)).toBe(true);
  });

  it('a step completed after the journey verified, as operations see it: charged, no success, no time to verify', async () => {
    const { registry, counted, start } = await switchedOnMetrics('late_');
    // The earlier step as it was: created 45 s ago, delivered and verified now, charged.
    fx.now += 5_000;
    await counted.tally({ ...start, status: 'verified', delivered: true, verifiedAt: fx.now });
    const json = (await registry.getMetricsAsJSON()) as unknown as {
      name: string;
      values: { labels: Record<string, string>; value: number; metricName?: string }[];
    }[];
    const of = (name: string) => json.find((m) => m.name === name)!.values;
    const rfcCount = of('late_method_time_to_verify_seconds').find(
      (v) => v.metricName?.endsWith('_count') && v.labels.method === 'reverse_flash_call',
    );
    expect(rfcCount?.value ?? 0).toBe(0);
    expect(of('late_method_charged_total')).toContainEqual(
      expect.objectContaining({ labels: { method: 'reverse_flash_call', currency: 'RUB' }, value: 0.25 }),
    );
    // Its sessions by outcome: started, ended expired by the journey's verification, then delivered late;
    // its late verification is no second end.
    const outcomes = Object.fromEntries(
      of('late_method_sessions_total')
        .filter((v) => v.labels.method === 'reverse_flash_call')
        .map((v) => [v.labels.outcome, v.value]),
    );
    expect(outcomes).toStrictEqual({ started: 1, expired: 1, delivered: 1 });
  });

  it('an earlier step’s end counts on the day it started, as every count of a session does', async () => {
    const midnight = Date.UTC(2026, 2, 16);
    fx.now = midnight - 10_000;
    const { start, next } = await switched();
    await verify(next);
    expect(fx.now).toBeGreaterThan(midnight);
    // Today (the new day) holds the SMS step alone; the reverse call, started yesterday, ended there.
    expect((await fx.stats.figures({ days: 1 })).reverse_flash_call).toBeUndefined();
    expect((await fx.stats.figures({ days: 2 })).reverse_flash_call).toMatchObject({
      started: 1,
      expired: 1,
    });
    expect(start.createdAt).toBeLessThan(midnight);
  });

  it('a step that ended before the journey verified keeps its own end', async () => {
    const { start, next } = await switched();
    await fx.stats.tally({ ...start, status: 'failed' });
    await verify(next);
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ failed: 1, expired: 0 });
  });

  it('nothing is ended while no later step verified, nor for a switch that named no earlier step', async () => {
    const { start, next } = await switched();
    fx.now += 60_000;
    await fx.stats.tally({ ...next, status: 'expired' });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 1, expired: 0 });
    const other = await switched(rfc, false);
    await verify(other.next);
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 2, expired: 0 });
    expect(await cell(start)).toMatchObject({ expired: 0, rescued: 0 });
  });

  it('an earlier step whose code is typed in the page is left in its moment figures, ended in its cells', async () => {
    const { start, next } = await switched({ method: 'flash_call', cost: rub(0.8) });
    await verify(next);
    expect(await cell(start)).toMatchObject({ expired: 1, rescued: 1 });
    // Cut off by the switch: neither ended nor pending in the moment's figures (a probe's only).
    const moment = await fx.stats.timeToVerify('flash_call', '7', 'mobile', 7);
    expect(moment.ended).toBe(0);
  });

  it('an earlier step typed in the page that probes the moment: left in its moment figures, not ended, when a later step verifies', async () => {
    const probe = Array.from({ length: 200 }, (_, i) => `probe-${i}`).find((id) => isProbeStep('sms', id))!;
    const start = session({ requestId: probe });
    await fx.stats.tally(start, 'client:a', 'mobile');
    fx.now += 20_000;
    const next = session({ ...rfc, phoneNumber: start.phoneNumber, journeyId: start.requestId });
    await fx.stats.tally(next, 'client:a', 'mobile', {}, [stepOf(start)]);
    await verify(next);
    expect(await cell(start)).toMatchObject({ expired: 1, rescued: 1 });
    expect(await fx.stats.timeToVerify('sms', '7', 'mobile', 7)).toMatchObject({
      started: 1,
      ended: 0,
      left: 1,
    });
  });

  it('an earlier step ended by the verification, its own end delivered later: operations see it delivered and expired, once each', async () => {
    const { registry, counted, start } = await switchedOnMetrics('ended_');
    fx.now = start.expiresAt;
    await counted.tally({ ...start, status: 'expired', delivered: true });
    const json = (await registry.getMetricsAsJSON()) as unknown as {
      name: string;
      values: { labels: Record<string, string>; value: number }[];
    }[];
    const sessions = json.find((m) => m.name === 'ended_method_sessions_total')!.values;
    const outcome = (name: string) =>
      sessions.find((v) => v.labels.method === 'reverse_flash_call' && v.labels.outcome === name)?.value ?? 0;
    expect([outcome('started'), outcome('delivered'), outcome('expired')]).toStrictEqual([1, 1, 1]);
  });

  it('an earlier step the figures did not count (a test number, a suspected start) is not ended', async () => {
    const { start, next } = await switched({ ...rfc, suspected: true });
    await verify(next);
    expect((await fx.stats.figures()).reverse_flash_call).toBeUndefined();
    expect(await cell(start)).toMatchObject({ expired: 0, rescued: 0 });
  });

  /** A page read the step's status after FOLLOWED_AFTER_MS. */
  const follow = (record: SessionRecord) =>
    fx.stats.followed({ ...record, createdAt: fx.now - FOLLOWED_AFTER_MS });
  /** The ranking's figures of the reverse call: ended (less unproven) and verified. */
  const ranked = async () => (await fx.stats.learningSamples()).reverse_flash_call;

  it('a user who left after switching to a paid step a page followed: the free step failed a real user', async () => {
    const { start, next } = await switched();
    await follow(next);
    fx.now = start.expiresAt;
    await fx.stats.tally({ ...start, status: 'expired' });
    // Ended unverified and proven (its switch's cost), not rescued: no later step verified them.
    expect(await cell(start)).toMatchObject({ expired: 1, unproven: 0, rescued: 0 });
    expect(await ranked()).toMatchObject({ started: 1, verified: 0 });
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 1 });
  });

  it('a free start a page followed, with no paid step after it, proves nothing (free starts steer nothing)', async () => {
    const alone = session(rfc);
    await fx.stats.tally(alone, 'client:z', 'mobile');
    await follow(alone);
    fx.now = alone.expiresAt;
    await fx.stats.tally({ ...alone, status: 'expired' });
    expect(await cell(alone)).toMatchObject({ expired: 1, unproven: 1 });
    // A journey switched to another free step a page followed: no more.
    const start = session({ ...rfc, method: 'msgr2_bot' });
    await fx.stats.tally(start, 'client:y', 'mobile');
    const next = session({ ...rfc, phoneNumber: start.phoneNumber, journeyId: start.requestId });
    await fx.stats.tally(next, 'client:y', 'mobile', {}, [stepOf(start)]);
    await follow(next);
    fx.now += 600_000;
    await fx.stats.tally({ ...start, status: 'expired' });
    expect((await fx.stats.learningSamples()).msgr2_bot).toBeUndefined();
    expect(await ranked()).toBeUndefined();
  });
});
