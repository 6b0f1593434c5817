/**
 * When a step may fall back to the next method, counted from its start: the moment the data says the
 * method has stalled for this user. Pure; the figures are MethodStats', the settings the policy's.
 */
import { quantileFromBuckets, TIME_TO_VERIFY_BUCKETS_MS } from './duration-histogram.js';

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

/**
 * Ms from a step's start at which it may fall back: once `minSamples` verified sessions of its method
 * are counted in `buckets` (time-to-verify histogram, TIME_TO_VERIFY_BUCKETS_MS), the time by which
 * all but `stalledShare` of them had verified, bounded by `floorMs` and `ceilingMs`; before that, the
 * fixed `timeoutMs` (the host's `timeoutSeconds`) as it stands.
 */
export function fallbackAfterMs(
  buckets: readonly number[],
  settings: FallbackMomentSettings,
  timeoutMs: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number {
  const verified = buckets.reduce((sum, count) => sum + count, 0);
  if (verified < settings.minSamples) return timeoutMs;
  const finished = quantileFromBuckets(buckets, 1 - settings.stalledShare, bounds);
  if (finished === null) return timeoutMs;
  return Math.round(Math.min(Math.max(finished, settings.floorMs), settings.ceilingMs));
}
