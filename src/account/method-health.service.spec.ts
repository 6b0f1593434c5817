import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { SessionRecord } from '../core/session-record.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../core/verification-events.js';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { methodStatsFixture, SPEC_KEYS, NOON } from '../../test/support/method-stats.fixture.js';
import { telemetryOf } from '../../test/support/telemetry.js';
import { FigureEvidence } from './figure-evidence.js';
import { DEMOTE_AFTER_MS, HEALTH_MIN_SESSIONS, HEALTH_WINDOW_MS } from './method-health.js';
import { HEALTH_READ_MS, MethodHealthWatch } from './method-health.service.js';
import { MethodStats } from './method-stats.service.js';

/*
 * MethodHealthWatch on the module's clock (issue 47): a drop of a method's completion on one operator
 * prefix degrades it, demotes it 20 minutes on, recovery promotes it back; each change is one
 * `verification.method_health` event; `report()` shows the figures judged.
 */

let now = NOON;
const { session, logger } = methodStatsFixture(() => now);
let seq = 0;
const on985 = (): string => `+7985${String(++seq).padStart(7, '0')}`;

describe('MethodHealthWatch', () => {
  let store: MemoryStore;
  let stats: MethodStats;
  let watch: MethodHealthWatch;
  let events: MethodHealthEvent[];

  beforeEach(() => {
    now = NOON;
    store = new MemoryStore({ clock: () => now });
    const telemetry = telemetryOf(logger());
    stats = new MethodStats(store, telemetry, new FigureEvidence(store, SPEC_KEYS.dataKeys));
    const options = resolveVerificationOptions({
      api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
      clock: () => now,
    });
    const emitter = new EventEmitter2();
    events = [];
    emitter.on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => void events.push(event));
    watch = new MethodHealthWatch(options, store, stats, telemetry, emitter);
  });
  afterEach(() => store.close());

  /**
   * `n` flash calls on +7 985 ended now: verified, or expired once the user was verified by SMS,
   * the journey's next step (a real user the flash call failed).
   */
  async function ended(n: number, verified: boolean): Promise<void> {
    for (let i = 0; i < n; i++) {
      const phoneNumber = on985();
      const record: SessionRecord = session({ phoneNumber, method: 'flash_call', cost: undefined });
      const journey = { journeyId: `journey-${record.requestId}` };
      await stats.tally({ ...record, ...journey });
      if (!verified) {
        const sms = session({ phoneNumber, ...journey });
        await stats.tally(sms);
        await stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: now + 20_000 });
      }
      const end: Partial<SessionRecord> = verified
        ? { status: 'verified', delivered: true, verifiedAt: now + 10_000 }
        : { status: 'expired' };
      await stats.tally({ ...record, ...journey, ...end });
    }
  }

  /** Advances the module clock by `ms` in read periods, reading the health each time. */
  async function pass(ms: number, completing: boolean): Promise<void> {
    for (let t = 0; t < ms; t += HEALTH_READ_MS) {
      now += HEALTH_READ_MS;
      await ended(2, completing);
      await watch.refresh('flash_call', on985());
    }
  }

  it('degrades on a drop, demotes exactly DEMOTE_AFTER_MS later, promotes back on recovery, one event each', async () => {
    // A healthy week (an hour here): every flash call on +7 985 verified.
    await ended(10 * HEALTH_MIN_SESSIONS, true);
    await pass(60 * 60_000, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events).toEqual([]);

    // The outage: nobody completes. The window shows the drop within it.
    const outage = now;
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
    while (now + HEALTH_READ_MS < degradedAt + DEMOTE_AFTER_MS) await pass(HEALTH_READ_MS, false);
    expect(now).toBe(degradedAt + DEMOTE_AFTER_MS - HEALTH_READ_MS);
    expect(watch.state('flash_call', on985())).toBe('degraded');
    await pass(HEALTH_READ_MS, false);
    expect(watch.state('flash_call', on985())).toBe('demoted');
    expect(events.map((e) => e.state)).toEqual(['degraded', 'demoted']);
    expect(now - outage).toBeLessThanOrEqual(60 * 60_000);

    // Recovery: back to healthy, with the read for operations showing it.
    await pass(HEALTH_WINDOW_MS, true);
    expect(watch.state('flash_call', on985())).toBe('healthy');
    expect(events.map((e) => e.state)).toEqual(['degraded', 'demoted', 'healthy']);
    const [report] = watch.report();
    expect(report).toMatchObject({
      method: 'flash_call',
      prefix: '+7985',
      state: 'healthy',
      level: 'operator',
    });
    expect(JSON.stringify(report)).not.toMatch(/\+7985\d{7}/);
  });

  it('reads a prefix at most once per HEALTH_READ_MS', async () => {
    let reads = 0;
    const cellSums = stats.cellSums.bind(stats);
    stats.cellSums = (...args) => {
      reads += 1;
      return cellSums(...args);
    };
    await watch.refresh('flash_call', on985());
    now += HEALTH_READ_MS - 1;
    await watch.refresh('flash_call', on985());
    expect(reads).toBe(1);
    now += 1;
    await watch.refresh('flash_call', on985());
    expect(reads).toBe(2);
  });
});
