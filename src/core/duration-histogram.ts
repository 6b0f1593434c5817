/**
 * A histogram of durations with fixed buckets, kept as plain counters (one per bucket, not
 * cumulative) so that a shared store can add them up across instances and days.
 */

/**
 * Upper bounds (ms) of the time-to-verify buckets, from 5 s to the spec's longest session (10 min).
 * A bucket holds the durations above the previous bound up to its own; one more bucket past the
 * last bound holds anything slower (a verification reported late).
 */
export const TIME_TO_VERIFY_BUCKETS_MS: readonly number[] = [
  5_000, 10_000, 20_000, 30_000, 45_000, 60_000, 90_000, 120_000, 180_000, 300_000, 600_000,
];

/** The index of the bucket a duration falls in: `bounds.length` for one past the last bound. */
export function bucketIndex(
  durationMs: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number {
  const index = bounds.findIndex((bound) => durationMs <= bound);
  return index === -1 ? bounds.length : index;
}

/**
 * The median estimated from bucket counts (`counts[i]` for bucket i, `bounds.length + 1` entries;
 * missing ones count as 0): see `quantileFromBuckets`. Null when nothing was observed.
 */
export function medianFromBuckets(
  counts: readonly number[],
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number | null {
  return quantileFromBuckets(counts, 0.5, bounds);
}

/**
 * The `q` quantile (0 < q < 1) estimated from bucket counts: the bucket holding that observation,
 * and within it a linear interpolation, as Prometheus' `histogram_quantile` does. The first bucket
 * starts at 0; a quantile in the overflow bucket is reported as the last bound (its true value is
 * only known to be above). Null when nothing was observed.
 */
export function quantileFromBuckets(
  counts: readonly number[],
  q: number,
  bounds: readonly number[] = TIME_TO_VERIFY_BUCKETS_MS,
): number | null {
  const total = counts.reduce((sum, count) => sum + count, 0);
  if (total <= 0) return null;
  const rank = total * q;
  let below = 0;
  for (let i = 0; i <= bounds.length; i++) {
    const count = counts[i] ?? 0;
    if (count > 0 && below + count >= rank) {
      if (i === bounds.length) return bounds[bounds.length - 1] ?? 0;
      const lower = i === 0 ? 0 : bounds[i - 1]!;
      return lower + ((rank - below) / count) * (bounds[i]! - lower);
    }
    below += count;
  }
  return bounds[bounds.length - 1] ?? 0;
}
