import { beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import type { MethodHealthEvent } from '../core/verification-events.js';
import { methodStatsSuite, healthWatchOn } from '../../test/support/method-stats.fixture.js';
import { DEMOTE_AFTER_MS, HEALTH_MIN_SESSIONS, HEALTH_WINDOW_MS } from './method-health.js';
import { HEALTH_READ_MS, MethodHealthWatch } from './method-health.service.js';

/*
 * MethodHealthWatch on the module's clock (issue 47): a drop of a method's completion on one operator
 * prefix degrades it, demotes it 20 minutes on, recovery promotes it back; each change is one
 * `verification.method_health` event; `report()` shows the figures judged.
 */

const fx = methodStatsSuite();
const { session } = fx;
let seq = 0;
const on985 = (): string => `+7985${String(++seq).padStart(7, '0')}`;

describe('MethodHealthWatch', () => {
  let watch: MethodHealthWatch;
  let events: MethodHealthEvent[];

  beforeEach(() => {
    ({ watch, events } = healthWatchOn(fx));
  });

  /**
   * `n` flash calls on +7 985 ended now: verified, or expired once the user was verified by SMS,
   * the journey's next step (a real user the flash call failed).
   */
  async function ended(n: number, verified: boolean): Promise<void> {
    for (let i = 0; i < n; i++) {
      const phoneNumber = on985();
      const record: SessionRecord = session({ phoneNumber, method: 'flash_call', cost: undefined });
      const journey = { journeyId: `journey-${record.requestId}` };
      await fx.stats.tally({ ...record, ...journey });
      if (!verified) {
        const sms = session({ phoneNumber, ...journey });
        await fx.stats.tally(sms);
        await fx.stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: fx.now + 20_000 });
      }
      const end: Partial<SessionRecord> = verified
        ? { status: 'verified', delivered: true, verifiedAt: fx.now + 10_000 }
        : { status: 'expired' };
      await fx.stats.tally({ ...record, ...journey, ...end });
    }
  }

  /** Advances the module clock by `ms` in read periods, reading the health each time. */
  async function pass(ms: number, completing: boolean): Promise<void> {
    for (let t = 0; t < ms; t += HEALTH_READ_MS) {
      fx.now += HEALTH_READ_MS;
      await ended(2, completing);
      await watch.refresh('flash_call', on985());
    }
  }

  it('degrades on a drop, demotes exactly DEMOTE_AFTER_MS later, promotes back on recovery, one event each', async () => {
    // A healthy week (an hour here): every flash call on +7 985 verified.
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await pass(60 * 60_000, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events).toStrictEqual([]);

    // The outage: nobody completes. The window shows the drop within it.
    const outage = fx.now;
    await pass(HEALTH_WINDOW_MS / 2, false);
    expect(watch.state('flash_call', on985())).toBe('degraded');
    expect(events).toHaveLength(1);
    const degradedAt = events[0]!.at.getTime();
    expect(degradedAt - outage).toBeLessThanOrEqual(HEALTH_WINDOW_MS / 2);
    expect(events[0]).toMatchObject({
      event: 'verification.method_health',
      method: 'flash_call',
      prefix: '+7985',
      previous: 'healthy',
      state: 'degraded',
      level: 'operator',
    });
    expect(events[0]!.recent.completion).toBeLessThan(0.7);

    // One read before the bound: still degraded; at it: demoted.
    while (fx.now + HEALTH_READ_MS < degradedAt + DEMOTE_AFTER_MS) await pass(HEALTH_READ_MS, false);
    expect(fx.now).toBe(degradedAt + DEMOTE_AFTER_MS - HEALTH_READ_MS);
    expect(watch.state('flash_call', on985())).toBe('degraded');
    await pass(HEALTH_READ_MS, false);
    expect(watch.state('flash_call', on985())).toBe('demoted');
    expect(events.map((e) => e.state)).toStrictEqual(['degraded', 'demoted']);
    expect(fx.now - outage).toBeLessThanOrEqual(60 * 60_000);

    // Recovery: back to healthy, with the read for operations showing it.
    await pass(HEALTH_WINDOW_MS, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events.map((e) => e.state)).toStrictEqual(['degraded', 'demoted', 'healthy']);
    const [report] = watch.report();
    expect(report).toMatchObject({
      method: 'flash_call',
      prefix: '+7985',
      state: 'healthy',
      level: 'operator',
    });
    expect(JSON.stringify(report)).not.toMatch(/\+7985\d{7}/);
  });

  it('reads a prefix at most once per HEALTH_READ_MS, its country’s cell once for all its prefixes', async () => {
    const reads: string[] = [];
    const cellDays = fx.stats.cellDays.bind(fx.stats);
    fx.stats.cellDays = (...args) => {
      reads.push(...args[1]);
      return cellDays(...args);
    };
    await watch.refresh('flash_call', on985());
    fx.now += HEALTH_READ_MS - 1;
    await watch.refresh('flash_call', on985());
    await watch.refresh('flash_call', '+79211234567');
    expect(reads).toStrictEqual(['7~985', '7~*', '7~921']);
    fx.now += 1;
    await watch.refresh('flash_call', on985());
    expect(reads.slice(3)).toStrictEqual(['7~985', '7~*']);
  });

  it('an outage that begins a minute before UTC midnight degrades within half a window, across it', async () => {
    const midnight = Date.UTC(2026, 2, 16);
    fx.now = midnight - 61 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await pass(60 * 60_000, true);
    expect(fx.now).toBe(midnight - 60_000);
    const outage = fx.now;
    await pass(HEALTH_WINDOW_MS / 2, false);
    expect(watch.state('flash_call', on985())).toBe('degraded');
    expect(events.map((e) => e.state)).toStrictEqual(['degraded']);
    expect(events[0]!.at.getTime()).toBeGreaterThan(midnight);
    expect(events[0]!.at.getTime() - outage).toBeLessThanOrEqual(HEALTH_WINDOW_MS / 2);
    // The week judged against is the seven days up to the new one: its completion is the healthy hour's.
    expect(events[0]!.week.completion).toBeGreaterThan(0.8);
  });

  it('a healthy method stays healthy through UTC midnight, its window judged on every read', async () => {
    const midnight = Date.UTC(2026, 2, 16);
    fx.now = midnight - 40 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await pass(40 * 60_000 + HEALTH_READ_MS, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events).toStrictEqual([]);
    // The first read after midnight judged the last 20 minutes: both days' sessions, 2 a read.
    const [report] = watch.report();
    expect(report!.recent.ended).toBe((HEALTH_WINDOW_MS / HEALTH_READ_MS) * 2);
  });

  it('sessions started before UTC midnight that fail after it count in the window that began after it', async () => {
    const midnight = Date.UTC(2026, 2, 16);
    fx.now = midnight - 61 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await pass(60 * 60_000, true);
    // Started 15 s before midnight, counted on that day; they fail 20 minutes later.
    fx.now += 45_000;
    const late = Array.from({ length: 60 }, () => {
      const record = session({ phoneNumber: on985(), method: 'flash_call', cost: undefined });
      return { ...record, journeyId: `journey-${record.requestId}` };
    });
    for (const record of late) await fx.stats.tally(record);
    fx.now += 15_000;
    expect(fx.now).toBe(midnight);
    await pass(HEALTH_WINDOW_MS, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    for (const record of late) {
      const sms = session({ phoneNumber: record.phoneNumber, journeyId: record.journeyId });
      await fx.stats.tally(sms);
      await fx.stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: fx.now });
      await fx.stats.tally({ ...record, status: 'expired' });
    }
    await pass(HEALTH_READ_MS, true);
    expect(watch.state('flash_call', on985())).toBe('degraded');
  });
});
