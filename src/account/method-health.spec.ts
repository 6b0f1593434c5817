import { describe, expect, it } from '@jest/globals';
import {
  DEMOTE_AFTER_MS,
  HEALTH_MIN_SESSIONS,
  nextHealth,
  RETRY_AFTER_MS,
  verdictOf,
  type Health,
  type Rates,
} from './method-health.js';

/* The health rules of a method on an operator prefix (issue 47): each bound, a tick before and after. */

const T0 = Date.UTC(2026, 10, 29, 12);
const week: Rates = { started: 1000, ended: 1000, completion: 1, delivery: 1 };
const recent = (completion: number, delivery: number | null, n = HEALTH_MIN_SESSIONS): Rates => ({
  started: n,
  ended: n,
  completion,
  delivery,
});

describe('method health', () => {
  it('judges a drop below 70 % of the week, a recovery at 85 %, nothing on too few sessions', () => {
    expect(verdictOf(recent(0.7, 0.9), week)).toBe('steady');
    expect(verdictOf(recent(0.699, 0.9), week)).toBe('dropped');
    expect(verdictOf(recent(0.85, 0.9), week)).toBe('recovered');
    expect(verdictOf(recent(0.849, 0.9), week)).toBe('steady');
    // Delivery is shown, never judged: any start counts in it, a free one nobody opens too.
    expect(verdictOf(recent(1, 0.3), week)).toBe('recovered');
    expect(verdictOf(recent(0.1, 0.1, HEALTH_MIN_SESSIONS - 1), week)).toBeNull();
    expect(verdictOf(recent(0.1, 0.1, HEALTH_MIN_SESSIONS), week)).toBe('dropped');
    expect(verdictOf(recent(0.1, 1), { ...week, completion: null })).toBeNull();
  });

  it('demotes a degraded method exactly DEMOTE_AFTER_MS after the drop, not a tick before', () => {
    const degraded = nextHealth({ state: 'healthy', since: 0 }, 'dropped', T0);
    expect(degraded).toStrictEqual({ state: 'degraded', since: T0 });
    expect(nextHealth(degraded, 'dropped', T0 + DEMOTE_AFTER_MS - 1).state).toBe('degraded');
    expect(nextHealth(degraded, 'dropped', T0 + DEMOTE_AFTER_MS)).toStrictEqual({
      state: 'demoted',
      since: T0 + DEMOTE_AFTER_MS,
    });
    expect(nextHealth(degraded, 'dropped', T0 + DEMOTE_AFTER_MS + 1).state).toBe('demoted');
    // Not demoted on a window that no longer shows the drop.
    expect(nextHealth(degraded, 'steady', T0 + DEMOTE_AFTER_MS).state).toBe('degraded');
    // Within the hour of the drop: demoted 20 minutes after it was seen.
    expect(DEMOTE_AFTER_MS).toBeLessThanOrEqual(60 * 60_000);
  });

  it('promotes back on recovery; a demoted method not seen dropping is tried again after RETRY_AFTER_MS', () => {
    const demoted: Health = { state: 'demoted', since: T0 };
    expect(nextHealth(demoted, 'recovered', T0 + 1)).toStrictEqual({ state: 'healthy', since: T0 + 1 });
    expect(nextHealth(demoted, null, T0 + RETRY_AFTER_MS - 1)).toBe(demoted);
    expect(nextHealth(demoted, null, T0 + RETRY_AFTER_MS)).toStrictEqual({
      state: 'degraded',
      since: T0 + RETRY_AFTER_MS,
    });
    expect(nextHealth(demoted, 'dropped', T0 + RETRY_AFTER_MS + 1)).toBe(demoted);
    // A steady window (no drop, not yet recovered) tries it again as well: only a drop keeps it demoted.
    expect(nextHealth(demoted, 'steady', T0 + RETRY_AFTER_MS - 1)).toBe(demoted);
    expect(nextHealth(demoted, 'steady', T0 + RETRY_AFTER_MS)).toStrictEqual({
      state: 'degraded',
      since: T0 + RETRY_AFTER_MS,
    });
    const healthy: Health = { state: 'healthy', since: T0 };
    expect(nextHealth(healthy, 'steady', T0 + 1)).toBe(healthy);
    expect(nextHealth(healthy, null, T0 + 1)).toBe(healthy);
  });

  it('a degraded method without a judgement for RETRY_AFTER_MS is healthy again; a steady window keeps it degraded', () => {
    const degraded: Health = { state: 'degraded', since: T0 };
    expect(nextHealth(degraded, null, T0 + RETRY_AFTER_MS - 1)).toBe(degraded);
    expect(nextHealth(degraded, null, T0 + RETRY_AFTER_MS)).toStrictEqual({
      state: 'healthy',
      since: T0 + RETRY_AFTER_MS,
    });
    expect(nextHealth(degraded, 'steady', T0 + 2 * RETRY_AFTER_MS)).toBe(degraded);
    // A demoted method tried again (degraded) is healthy once unjudged as long again.
    const retried = nextHealth({ state: 'demoted', since: T0 }, null, T0 + RETRY_AFTER_MS);
    expect(nextHealth(retried, null, T0 + 2 * RETRY_AFTER_MS - 1).state).toBe('degraded');
    expect(nextHealth(retried, null, T0 + 2 * RETRY_AFTER_MS).state).toBe('healthy');
  });

  it('the unjudged time runs from the last window that judged a degraded method, not from its degradation', () => {
    const judged: Health = { state: 'degraded', since: T0, judgedAt: T0 + 15 * 60_000 };
    expect(nextHealth(judged, null, T0 + 15 * 60_000 + RETRY_AFTER_MS - 1)).toBe(judged);
    expect(nextHealth(judged, null, T0 + 15 * 60_000 + RETRY_AFTER_MS).state).toBe('healthy');
    // A verdict older than the state counts from the state.
    const retried: Health = { state: 'degraded', since: T0, judgedAt: T0 - 60_000 };
    expect(nextHealth(retried, null, T0 + RETRY_AFTER_MS - 1)).toBe(retried);
    expect(nextHealth(retried, null, T0 + RETRY_AFTER_MS).state).toBe('healthy');
  });
});
