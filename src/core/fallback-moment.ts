/**
 * When a step may fall back to the next method, counted from its start: the moment the data says the
 * method has stalled for this user. Pure; the figures are MethodStats', the settings the policy's.
 */
import { createHash } from 'node:crypto';
import { quantileFromBuckets, TIME_TO_VERIFY_BUCKETS_MS } from './duration-histogram.js';
import { methodTraits, type VerificationMethod } from './verification-method.js';

/** `orchestration.fallback`: when a step has stalled. */
export interface FallbackMomentSettings {
  /**
   * The share of a method's successful users (same calling code) still unfinished below which its
   * step has stalled: 0.5 falls back at their median time to verify, 0.1 at their 90th percentile.
   */
  stalledShare: number;
  /**
   * Also stalled once fewer than this share of the users still waiting on the step go on to verify
   * (counting those who never do): a method few users complete falls back early. False: off.
   */
  waitingShare: number | false;
  /** Verified sessions the figures must hold before they decide; before, the method's fixed timeout. */
  minSamples: number;
  /** The learned moment is never earlier than this (ms from the step's start)… */
  floorMs: number;
  /** …nor later than this. */
  ceilingMs: number;
}

/** What the moment is learned from: one method's sessions that inform it and have ended. */
export interface FallbackFigures {
  /**
   * Sessions ended (verified, expired or failed). A session still pending is left out: counted from
   * its start, the users still on their way would look like users who gave up.
   */
  ended: number;
  /** Verified sessions per time-to-verify bucket (TIME_TO_VERIFY_BUCKETS_MS). */
  buckets: readonly number[];
}

/** A moment group's counters as read: `ended` and `buckets`, with the starts and the steps left. */
export interface MomentCounts extends FallbackFigures {
  started: number;
  /** Steps ended unverified because another step verified their journey (neither ended nor pending). */
  left: number;
}

/** Counts of several groups (device hints) added up. */
export function sumMomentCounts(groups: readonly MomentCounts[]): MomentCounts {
  const width = Math.max(0, ...groups.map((counts) => counts.buckets.length));
  const add = (pick: (counts: MomentCounts) => number) =>
    groups.reduce((sum, counts) => sum + pick(counts), 0);
  return {
    started: add((counts) => counts.started),
    ended: add((counts) => counts.ended),
    left: add((counts) => counts.left),
    buckets: Array.from({ length: width }, (_, i) => add((counts) => counts.buckets[i] ?? 0)),
  };
}

/**
 * The figures of the steps started before `then` was read (`sinceMs` ago, at least a ceiling): each
 * has ended or been pending past the ceiling, so its outcome up to any moment the rule may choose is
 * known. Counted from every step, a busy young host's figures hold its fast successes at once and its
 * slow ones and its users who never complete only later: the moment comes too early. Verifications
 * since `then` of steps started after it are told apart by their time to verify (one verified τ
 * after its start, at a time spread evenly over `sinceMs`, started after `then` with probability
 * 1 − τ ÷ sinceMs, τ taken at its bucket's upper bound); a step started before `then` and still
 * pending counts as ended unverified. Without `then` (not known yet), every step's figures.
 */
export function matureFigures(
  now: MomentCounts,
  then: MomentCounts | undefined,
  sinceMs: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): FallbackFigures {
  if (then === undefined) return { ended: now.ended, buckets: now.buckets };
  const young = now.buckets.map((count, i) => {
    const upper = bounds[i];
    const since = Math.max(count - (then.buckets[i] ?? 0), 0);
    return upper === undefined ? 0 : since * Math.max(0, 1 - upper / sinceMs);
  });
  const youngVerified = young.reduce((sum, count) => sum + count, 0);
  const pending = Math.max(now.started - now.ended - now.left, 0);
  const closedBefore = now.ended + now.left - youngVerified;
  const stalled = Math.min(Math.max(then.started - closedBefore, 0), pending);
  return {
    ended: now.ended - youngVerified + stalled,
    buckets: now.buckets.map((count, i) => count - young[i]!),
  };
}

/**
 * Ms from a step's start at which it may fall back: once `minSamples` verified sessions of its method
 * are counted, the time by which all but `stalledShare` of them had verified (their 1 − stalledShare
 * quantile), or earlier, with `waitingShare`, the earliest time at which fewer than `waitingShare`
 * of the users still waiting go on to verify (of `ended` sessions, `verified` verified: the time by
 * which all but waitingShare × (ended − verified_by_then) of them had); bounded by `floorMs` and
 * `ceilingMs`. Before that, the fixed `timeoutMs` (the host's `timeoutSeconds`) as it stands.
 */
export function fallbackAfterMs(
  figures: FallbackFigures,
  settings: FallbackMomentSettings,
  timeoutMs: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number {
  const verified = verifiedCount(figures);
  if (verified < settings.minSamples) return timeoutMs;
  let moment = quantileFromBuckets(figures.buckets, 1 - settings.stalledShare, bounds);
  if (moment === null) return timeoutMs;
  if (settings.waitingShare !== false) {
    const ended = Math.max(figures.ended, verified);
    const share = settings.waitingShare;
    // (verified − x) ÷ (ended − x) ≤ share once x, the users verified by then, reaches this:
    const needed = (verified - share * ended) / (1 - share);
    const waited = needed <= 0 ? 0 : quantileFromBuckets(figures.buckets, needed / verified, bounds);
    if (waited !== null) moment = Math.min(moment, waited);
  }
  return Math.round(Math.min(Math.max(moment, settings.floorMs), settings.ceilingMs));
}

/** Whether the figures hold enough verified sessions to learn the moment from (`minSamples`). */
export function learnsFallbackMoment(figures: FallbackFigures, settings: FallbackMomentSettings): boolean {
  return verifiedCount(figures) >= settings.minSamples;
}

function verifiedCount(figures: FallbackFigures): number {
  return figures.buckets.reduce((sum, count) => sum + count, 0);
}

/** One step in this many of a method completed in the page is a probe (see `informsFallbackMoment`). */
export const PROBE_EVERY = 10;

/**
 * Whether the step falls back only at the ceiling, to feed the figures (a probe): a code typed in
 * the page is abandoned once the user moves on, so steps cut off at the learned moment show only
 * the users faster than it, and a moment learned from them would sink step by step to the floor.
 * A method the user completes outside the page (`codeEntry: 'never'`: the reverse call is placed
 * whatever the page shows) is not cut off and needs no probe. Drawn from the request id: every
 * instance agrees, and nothing is stored.
 */
export function isProbeStep(method: VerificationMethod, requestId: string): boolean {
  if (!cutOffBySwitch(method)) return false;
  return createHash('sha256').update(requestId).digest().readUInt32BE(0) % PROBE_EVERY === 0;
}

/**
 * Whether a session's time to verify may teach the method's fallback moment: its method is
 * completed outside the page, or the session was a probe (ran to the ceiling).
 */
export function informsFallbackMoment(method: VerificationMethod, requestId: string): boolean {
  return !cutOffBySwitch(method) || isProbeStep(method, requestId);
}

/** Whether a user who moves on abandons a step of this method: its code is typed in the page. */
export function cutOffBySwitch(method: VerificationMethod): boolean {
  return methodTraits(method).codeEntry !== 'never';
}

/**
 * Where a step may fall back, ms after its start: `afterMs`, or a probe's ceiling once the moment is
 * learned. Until then the fixed moment cuts steps off no earlier than the host chose, so the figures
 * need no probe, and every user gets the moment the host set.
 */
export function stepFallbackMs(
  method: VerificationMethod,
  requestId: string,
  settings: FallbackMomentSettings,
  moment: { afterMs: number; learned: boolean },
): number {
  return moment.learned && isProbeStep(method, requestId)
    ? Math.max(settings.ceilingMs, moment.afterMs)
    : moment.afterMs;
}
