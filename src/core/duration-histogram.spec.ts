import { describe, expect, it } from '@jest/globals';
import {
  bucketIndex,
  medianFromBuckets,
  quantileFromBuckets,
  TIME_TO_VERIFY_BUCKETS_MS,
} from './duration-histogram.js';

const BOUNDS = [10, 20, 40];

describe('duration histogram: fixed buckets and the median estimated from them', () => {
  it('puts a duration in the first bucket whose bound holds it; past the last bound in the overflow bucket', () => {
    expect([0, 10, 11, 20, 21, 40, 41, 1e9].map((ms) => bucketIndex(ms, BOUNDS))).toStrictEqual([
      0, 0, 1, 1, 2, 2, 3, 3,
    ]);
    expect(bucketIndex(5_000)).toBe(0);
    expect(bucketIndex(5_001)).toBe(1);
    expect(bucketIndex(600_000)).toBe(TIME_TO_VERIFY_BUCKETS_MS.length - 1);
    expect(bucketIndex(600_001)).toBe(TIME_TO_VERIFY_BUCKETS_MS.length);
  });

  it('the time-to-verify buckets rise from 5 s to the longest session, 10 min', () => {
    expect(TIME_TO_VERIFY_BUCKETS_MS[0]).toBe(5_000);
    expect(TIME_TO_VERIFY_BUCKETS_MS.at(-1)).toBe(600_000);
    for (let i = 1; i < TIME_TO_VERIFY_BUCKETS_MS.length; i++)
      expect(TIME_TO_VERIFY_BUCKETS_MS[i]).toBeGreaterThan(TIME_TO_VERIFY_BUCKETS_MS[i - 1]!);
  });

  it('null when nothing was observed', () => {
    expect(medianFromBuckets([], BOUNDS)).toBeNull();
    expect(medianFromBuckets([0, 0, 0, 0], BOUNDS)).toBeNull();
  });

  it('interpolates linearly inside the bucket holding the middle observation (the first starts at 0)', () => {
    // 4 in (0, 10]: the middle (2 of 4) is half-way through it.
    expect(medianFromBuckets([4, 0, 0, 0], BOUNDS)).toBe(5);
    // 2 in (0, 10], 2 in (10, 20]: the middle falls exactly at the end of the first bucket.
    expect(medianFromBuckets([2, 2, 0, 0], BOUNDS)).toBe(10);
    // 1, 1, 2: the middle (2 of 4) is at the end of the second bucket.
    expect(medianFromBuckets([1, 1, 2, 0], BOUNDS)).toBe(20);
    // 1, 0, 3: the middle is half an observation into (20, 40] of 3: 20 + (1/3)·20.
    expect(medianFromBuckets([1, 0, 3, 0], BOUNDS)).toBeCloseTo(20 + 20 / 3, 10);
  });

  it('skips empty buckets and reports the last bound when the median lies past it', () => {
    expect(medianFromBuckets([0, 0, 2, 0], BOUNDS)).toBe(30);
    expect(medianFromBuckets([1, 0, 0, 5], BOUNDS)).toBe(40);
    // Missing trailing entries count as zero.
    expect(medianFromBuckets([0, 6], BOUNDS)).toBe(15);
  });

  it('agrees with the true median of evenly spread samples within a bucket width', () => {
    const samples = Array.from({ length: 101 }, (_, i) => 2_000 + i * 2_500); // 2 s … 252 s, median 127 s
    const counts = new Array<number>(TIME_TO_VERIFY_BUCKETS_MS.length + 1).fill(0);
    for (const ms of samples) counts[bucketIndex(ms)]! += 1;
    const median = medianFromBuckets(counts)!;
    expect(Math.abs(median - 127_000)).toBeLessThanOrEqual(60_000);
    expect(median).toBeGreaterThan(120_000);
    expect(median).toBeLessThanOrEqual(180_000);
  });
});

describe('quantileFromBuckets', () => {
  it('finds the bucket of the q-th observation and interpolates in it; the median is its 0.5', () => {
    // 10 observations: 2 in (0, 10], 6 in (10, 20], 2 in (20, 40].
    const counts = [2, 6, 2, 0];
    expect(quantileFromBuckets(counts, 0.2, BOUNDS)).toBe(10);
    expect(quantileFromBuckets(counts, 0.5, BOUNDS)).toBe(15);
    expect(quantileFromBuckets(counts, 0.9, BOUNDS)).toBe(30);
    expect(medianFromBuckets(counts, BOUNDS)).toBe(quantileFromBuckets(counts, 0.5, BOUNDS));
    expect(quantileFromBuckets([0, 0, 0, 5], 0.5, BOUNDS)).toBe(40);
    expect(quantileFromBuckets([], 0.9, BOUNDS)).toBeNull();
    // The rank at the end of a bucket is that bucket's bound, however many empty buckets follow.
    expect(quantileFromBuckets([2, 0, 2, 0], 0.5, BOUNDS)).toBe(10);
  });
});
