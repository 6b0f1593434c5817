import { SUM_COUNTS, totalOf, type DayCounters } from './figure-counters.js';
import { emptySums, type Sums } from './method-figures.js';

/*
 * The health of a method on an operator prefix (issue 47): a drop in its recent completion (of the
 * outcomes real users proved, Rates) against its week makes its fallback come sooner (`degraded`),
 * and if it lasts DEMOTE_AFTER_MS, takes it out of first place (`demoted`); it is promoted back once
 * its recent figures recover. Pure rules; MethodHealthWatch reads the figures and keeps the states.
 */

export type HealthState = 'healthy' | 'degraded' | 'demoted';

/** The recent window: figures of the sessions that ended (or started, for delivery) in the last 20 minutes. */
export const HEALTH_WINDOW_MS = 20 * 60_000;
/** Outcomes (verified or rescued) the window must hold before it judges. */
export const HEALTH_MIN_SESSIONS = 20;
/** Below this share of its week's rate, the recent rate is a drop. */
export const HEALTH_DROP_SHARE = 0.7;
/** At or above this share of its week's rate, a degraded or demoted method has recovered. */
export const HEALTH_RECOVER_SHARE = 0.85;
/** Degraded this long, still dropped: demoted (the drop's detection takes up to half the window before). */
export const DEMOTE_AFTER_MS = 20 * 60_000;
/**
 * Demoted this long with too few recent sessions to judge: degraded again, first again, to be judged;
 * degraded this long so: healthy again.
 */
export const RETRY_AFTER_MS = 30 * 60_000;
/** A degraded method's fallback moment is this share of its learned one (never below the floor). */
export const DEGRADED_FALLBACK_SHARE = 0.5;

/** A health and when it began (module clock). */
export interface Health {
  state: HealthState;
  since: number;
  /** When a window last gave a verdict (null aside); unset: never since `since`. */
  judgedAt?: number;
}

/** What the window shows against the week: `dropped`, `recovered` or neither; null: too few sessions. */
export type Verdict = 'dropped' | 'recovered' | 'steady' | null;

/**
 * The rates of some counters. `completion`: verified ÷ (verified + rescued), over the outcomes a real
 * user proved (a session verified, or one another step of its journey verified: RESCUED_FIELD); an
 * abandoned start proves nothing (free starts nobody opens, a giver's own calls left to expire), so
 * it never judges a method. `delivery`: delivered ÷ started, shown, never judged (any start counts).
 */
export interface Rates {
  started: number;
  /** The outcomes judged: verified + rescued. */
  ended: number;
  completion: number | null;
  delivery: number | null;
}

export function ratesOf(sums: Sums): Rates {
  const ended = sums.verified + sums.rescued;
  return {
    started: sums.started,
    ended,
    completion: ended > 0 ? Math.min(sums.verified / ended, 1) : null,
    delivery: sums.started > 0 && sums.delivered > 0 ? Math.min(sums.delivered / sums.started, 1) : null,
  };
}

/** Counters of `now` less those of `then` (the window's). */
export function sumsSince(now: Sums, then: Sums): Sums {
  const since = {
    ...now,
    buckets: now.buckets.map((count, i) => Math.max(count - (then.buckets[i] ?? 0), 0)),
  };
  for (const field of SUM_COUNTS) since[field] = Math.max(now[field] - then[field], 0);
  return since;
}

/**
 * A cell's counters added since `then` (the window's), day by day, so a window that crosses a UTC midnight
 * (where the week's days shift) is whole: a day after then's counts in full, a day then read counts less what it
 * held then, a day older than those then read (then keeps the two newest: sessions end on the day after their
 * start) counts nothing.
 */
export function windowSince(now: DayCounters, then: DayCounters): Sums {
  return totalOf(
    now.days.map((sums, i) => {
      const day = now.day - i;
      if (day > then.day) return sums;
      const before = then.days[then.day - day];
      return before ? sumsSince(sums, before) : emptySums();
    }),
  );
}

/**
 * The window's verdict against the week, on completion (Rates): dropped below HEALTH_DROP_SHARE of
 * the week's, recovered at or above HEALTH_RECOVER_SHARE of it; null when the window holds fewer
 * than HEALTH_MIN_SESSIONS judged outcomes or the week has no completion.
 */
export function verdictOf(recent: Rates, week: Rates): Verdict {
  if (recent.ended < HEALTH_MIN_SESSIONS || recent.completion === null || !week.completion) return null;
  const share = recent.completion / week.completion;
  if (share < HEALTH_DROP_SHARE) return 'dropped';
  return share >= HEALTH_RECOVER_SHARE ? 'recovered' : 'steady';
}

/** The health after a verdict at `now`. */
export function nextHealth(current: Health, verdict: Verdict, now: number): Health {
  const to = (state: HealthState): Health => (state === current.state ? current : { state, since: now });
  if (verdict === 'recovered') return to('healthy');
  if (current.state === 'healthy') return verdict === 'dropped' ? to('degraded') : current;
  if (current.state === 'degraded') {
    if (verdict === 'dropped') return now - current.since >= DEMOTE_AFTER_MS ? to('demoted') : current;
    // Too few outcomes to judge this long since a window last judged it (a quiet prefix): healthy again,
    // as a method is before its first verdict; not while users come in waves that each judge it.
    const unjudged = now - Math.max(current.since, current.judgedAt ?? current.since);
    return verdict === null && unjudged >= RETRY_AFTER_MS ? to('healthy') : current;
  }
  // Demoted: first place is gone, so the window thins; after a while it is tried again.
  return verdict !== 'dropped' && now - current.since >= RETRY_AFTER_MS ? to('degraded') : current;
}

const STATES: readonly HealthState[] = ['healthy', 'degraded', 'demoted'];

/** A health as the deployment keeps it in the store, with the level that set it. */
export interface KeptChange extends Health {
  by?: 'operator' | 'country';
}

/**
 * A kept change read back, if it is one: an object of a known state, dated neither ahead of `now` (its
 * writer's clock runs ahead, or it is damaged: it waits for the clock) nor `keptMs` or more before it (the store
 * keeps a change that long from its since: older is damaged).
 */
export function keptChange(kept: string, now: number, keptMs: number): KeptChange | null {
  let record: Partial<KeptChange> | null;
  try {
    record = JSON.parse(kept) as typeof record;
  } catch {
    return null;
  }
  const { state, since, by } = record ?? {};
  if (!STATES.includes(state!) || typeof since !== 'number' || !Number.isFinite(since)) return null;
  if (since > now || since <= now - keptMs) return null;
  return { state: state!, since, by };
}
