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
  /** Verified sessions the figures must hold before they decide; before, the method's fixed timeout. */
  minSamples: number;
  /** The learned moment is never earlier than this (ms from the step's start)… */
  floorMs: number;
  /** …nor later than this. */
  ceilingMs: number;
}

/** What the moment is learned from: one method's sessions that inform it (started, and verified by bucket). */
export interface FallbackFigures {
  started: number;
  /** Verified sessions per time-to-verify bucket (TIME_TO_VERIFY_BUCKETS_MS). */
  buckets: readonly number[];
}

/**
 * Ms from a step's start at which it may fall back: once `minSamples` verified sessions of its method
 * are counted, the earliest time at which fewer than `stalledShare` of the users still waiting go on
 * to verify (of `started` sessions, `verified` verified, the time by which all but
 * stalledShare × (started − verified_by_then) of them had), bounded by `floorMs` and `ceilingMs`;
 * before that, the fixed `timeoutMs` (the host's `timeoutSeconds`) as it stands. A method most users
 * complete falls back late (a waiting user is likely still on the way), one few complete early.
 */
export function fallbackAfterMs(
  figures: FallbackFigures,
  settings: FallbackMomentSettings,
  timeoutMs: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number {
  const verified = verifiedCount(figures);
  if (verified < settings.minSamples) return timeoutMs;
  const started = Math.max(figures.started, verified);
  const share = settings.stalledShare;
  // (verified − x) ÷ (started − x) ≤ share once x, the users verified by then, reaches this:
  const needed = (verified - share * started) / (1 - share);
  const finished = needed <= 0 ? 0 : quantileFromBuckets(figures.buckets, needed / verified, bounds);
  if (finished === null) return timeoutMs;
  return Math.round(Math.min(Math.max(finished, settings.floorMs), settings.ceilingMs));
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
