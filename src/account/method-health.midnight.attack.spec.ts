import { beforeEach, describe, expect, it } from '@jest/globals';
import type { SessionRecord } from '../core/session-record.js';
import type { MethodHealthEvent } from '../core/verification-events.js';
import { DAY_MS } from '../core/clock.js';
import { methodStatsSuite, healthWatchOn } from '../../test/support/method-stats.fixture.js';
import { HEALTH_MIN_SESSIONS, HEALTH_WINDOW_MS } from './method-health.js';
import { HEALTH_READ_MS, MethodHealthWatch } from './method-health.service.js';

/*
 * Attacks on the recent window counted day by day (windowSince, MethodStats.cellDays): the clock at each bound of
 * a UTC midnight, a then-read from long before, two instances reading one store at different times.
 */

const fx = methodStatsSuite();
const { session } = fx;
let seq = 0;
const on985 = (): string => `+7985${String(++seq).padStart(7, '0')}`;
const MIDNIGHT = Date.UTC(2026, 2, 16);

describe('MethodHealthWatch: the recent window at the bounds of a UTC midnight', () => {
  let watch: MethodHealthWatch;
  let events: MethodHealthEvent[];

  beforeEach(() => {
    ({ watch, events } = healthWatchOn(fx));
  });

  /** `n` flash calls on +7 985 started now and ended at once: verified, or expired with SMS verifying the user. */
  async function ended(n: number, verified: boolean): Promise<void> {
    for (let i = 0; i < n; i++) {
      const phoneNumber = on985();
      const record: SessionRecord = session({ phoneNumber, method: 'flash_call', cost: undefined });
      const journey = { journeyId: `journey-${record.requestId}` };
      await fx.stats.tally({ ...record, ...journey });
      if (!verified) {
        const sms = session({ phoneNumber, ...journey });
        await fx.stats.tally(sms);
        await fx.stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: fx.now });
      }
      const end: Partial<SessionRecord> = verified
        ? { status: 'verified', delivered: true, verifiedAt: fx.now + 10_000 }
        : { status: 'expired' };
      await fx.stats.tally({ ...record, ...journey, ...end });
    }
  }

  const readAt = async (at: number): Promise<void> => {
    fx.now = at;
    await watch.refresh('flash_call', on985());
  };
  const recent = () => watch.report()[0]!.recent;

  // A then-read at, just before and just after midnight; and a window that ends at, before or after it.
  it.each([
    ['a then-read 1 ms before midnight', MIDNIGHT - 1],
    ['a then-read exactly at midnight', MIDNIGHT],
    ['a then-read 1 ms after midnight', MIDNIGHT + 1],
    ['a window ending 1 ms before midnight', MIDNIGHT - 1 - HEALTH_WINDOW_MS],
    ['a window ending exactly at midnight', MIDNIGHT - HEALTH_WINDOW_MS],
    ['a window ending 1 ms after midnight', MIDNIGHT + 1 - HEALTH_WINDOW_MS],
  ])('%s: the window holds exactly the sessions since it, on either day', async (_, then) => {
    fx.now = then - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    // Before the then-read, in its millisecond: not in the window.
    fx.now = then;
    await ended(7, false);
    await readAt(then);
    // In its millisecond after it, and at every millisecond about midnight and the window's end.
    await ended(HEALTH_MIN_SESSIONS, true);
    for (const at of [MIDNIGHT - 1, MIDNIGHT, MIDNIGHT + 1, then + HEALTH_WINDOW_MS - 1]) {
      if (at <= then || at >= then + HEALTH_WINDOW_MS) continue;
      fx.now = at;
      await ended(3, false);
    }
    const inWindow = [MIDNIGHT - 1, MIDNIGHT, MIDNIGHT + 1, then + HEALTH_WINDOW_MS - 1].filter(
      (at) => at > then && at < then + HEALTH_WINDOW_MS,
    ).length;
    // Exactly a window after the then-read: it is the window's start.
    await readAt(then + HEALTH_WINDOW_MS);
    expect(watch.report()[0]!.level).toBe('operator');
    expect(recent()).toMatchObject({
      started: HEALTH_MIN_SESSIONS + 3 * inWindow,
      ended: HEALTH_MIN_SESSIONS + 3 * inWindow,
    });
  });

  it('a read 1 ms short of a window after the last one judges nothing yet', async () => {
    fx.now = MIDNIGHT - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await readAt(MIDNIGHT - 10 * 60_000);
    await ended(HEALTH_MIN_SESSIONS, false);
    await readAt(MIDNIGHT + 10 * 60_000 - 1);
    expect(recent()).toMatchObject({ ended: 0 });
    expect(watch.state('flash_call', on985())).toBe('healthy');
    await readAt(MIDNIGHT + 10 * 60_000 + HEALTH_READ_MS);
    expect(watch.state('flash_call', on985())).toBe('degraded');
  });

  it('two instances on one store, reading at different times across midnight, each judges its own window', async () => {
    const other = healthWatchOn(fx);
    fx.now = MIDNIGHT - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await readAt(MIDNIGHT - 5 * 60_000);
    fx.now = MIDNIGHT - 2 * 60_000;
    await ended(HEALTH_MIN_SESSIONS, true);
    await other.watch.refresh('flash_call', on985());
    fx.now = MIDNIGHT + 60_000;
    await ended(HEALTH_MIN_SESSIONS, true);
    await readAt(MIDNIGHT + 15 * 60_000);
    expect(recent()).toMatchObject({ ended: 2 * HEALTH_MIN_SESSIONS });
    fx.now = MIDNIGHT + 18 * 60_000;
    await ended(HEALTH_MIN_SESSIONS, true);
    await other.watch.refresh('flash_call', on985());
    expect(other.watch.report()[0]!.recent).toMatchObject({ ended: 2 * HEALTH_MIN_SESSIONS });
    expect([...events, ...other.events]).toStrictEqual([]);
  });

  it.each([
    ['1 ms short of two windows old judges', 2 * HEALTH_WINDOW_MS - 1, HEALTH_MIN_SESSIONS, 'degraded'],
    ['exactly two windows old is left aside, nothing judged', 2 * HEALTH_WINDOW_MS, 0, 'healthy'],
  ])('a then-read %s', async (_, after, judged, state) => {
    const then = MIDNIGHT - 30 * 60_000;
    fx.now = then - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await readAt(then);
    fx.now = then + 60_000;
    await ended(HEALTH_MIN_SESSIONS, false);
    await readAt(then + after);
    expect(recent()).toMatchObject({ ended: judged });
    expect(watch.state('flash_call', on985())).toBe(state);
  });

  it('a then-read left aside as too old: the read that left it begins the next window', async () => {
    fx.now = MIDNIGHT - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await readAt(MIDNIGHT - 60 * 60_000);
    await readAt(MIDNIGHT - 10 * 60_000);
    await ended(HEALTH_MIN_SESSIONS, false);
    await readAt(MIDNIGHT + 10 * 60_000);
    expect(recent()).toMatchObject({ ended: HEALTH_MIN_SESSIONS, completion: 0 });
    expect(watch.state('flash_call', on985())).toBe('degraded');
  });

  // An instance whose last read of the method on the prefix was hours or days ago (a quiet night, no user of
  // that operator on it): a window of HEALTH_WINDOW_MS is the sessions of the last 20 minutes, not of the hours
  // since; an outage long over is not judged as recent.
  it.each([
    ['a quiet night across midnight', MIDNIGHT - 2 * 60 * 60_000, MIDNIGHT + 7 * 60 * 60_000],
    ['two days without a read', MIDNIGHT - 2 * 60 * 60_000, MIDNIGHT + 2 * DAY_MS],
  ])('%s: an outage over hours ago is not judged at the first read after it', async (_, last, next) => {
    fx.now = last - 3 * 60 * 60_000;
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await readAt(last);
    // Other instances' users meanwhile: an hour's outage, then hours of healthy completion.
    fx.now = MIDNIGHT + 60 * 60_000;
    await ended(5 * HEALTH_MIN_SESSIONS, false);
    fx.now = next - 60 * 60_000;
    await ended(2 * HEALTH_MIN_SESSIONS, true);
    await readAt(next);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events).toStrictEqual([]);
  });
});
