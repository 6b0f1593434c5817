import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import {
  bucketField,
  CALLERS_FIELD,
  CHARGED_FIELD,
  LEFT_FIELD,
  RESCUED_FIELD,
  emptySums,
  UNPROVEN_FIELD,
  type Sums,
} from './method-figures.js';

const BUCKET_COUNT = TIME_TO_VERIFY_BUCKETS_MS.length + 1;
const FIELDS = [
  'delivered',
  'verified',
  'expired',
  'failed',
  CHARGED_FIELD,
  CALLERS_FIELD,
  LEFT_FIELD,
  UNPROVEN_FIELD,
  RESCUED_FIELD,
  ...Array.from({ length: BUCKET_COUNT }, (_, i) => bucketField(i)),
];

/** The store key of one day counter of the method figures. */
export function counterKey(day: string, method: string, group: string, field: string): string {
  return `stats:${day}:${method}:${group}:${field}`;
}

/**
 * A group's (cell's) counters by day as read at one time: `days[i]` is the UTC day numbered `day - i`
 * (Math.floor(ms / DAY_MS)), newest first.
 */
export interface DayCounters {
  day: number;
  days: Sums[];
}

/** One method's counters of a group (country or cell) on each day; a day without starts is not read further. */
export async function dayCounters(
  store: VerificationStore,
  method: string,
  group: string,
  days: readonly string[],
): Promise<Sums[]> {
  const key = (day: string, field: string) => counterKey(day, method, group, field);
  const startedByDay = await Promise.all(days.map((day) => read(store, key(day, 'started'))));
  return Promise.all(
    days.map(async (day, i) => {
      const started = startedByDay[i]!;
      const values =
        started > 0 ? await Promise.all(FIELDS.map((field) => read(store, key(day, field)))) : [];
      const value = (field: string) => values[FIELDS.indexOf(field)] ?? 0;
      return {
        started,
        delivered: value('delivered'),
        verified: value('verified'),
        expired: value('expired'),
        failed: value('failed'),
        chargedMinor: value(CHARGED_FIELD),
        callers: value(CALLERS_FIELD),
        left: value(LEFT_FIELD),
        unproven: value(UNPROVEN_FIELD),
        rescued: value(RESCUED_FIELD),
        buckets: Array.from({ length: BUCKET_COUNT }, (_, b) => value(bucketField(b))),
      };
    }),
  );
}

/** The counters of Sums (all but the buckets), for what is done to each alike. */
export const SUM_COUNTS = [
  'started',
  'delivered',
  'verified',
  'expired',
  'failed',
  'chargedMinor',
  'callers',
  'left',
  'unproven',
  'rescued',
] as const satisfies readonly (keyof Sums)[];

/** Counters added up (a group's days), every bucket kept. */
export function totalOf(all: readonly Sums[]): Sums {
  const total: Sums = { ...emptySums(), buckets: new Array<number>(BUCKET_COUNT).fill(0) };
  for (const sums of all) {
    for (const field of SUM_COUNTS) total[field] += sums[field];
    sums.buckets.forEach((count, i) => (total.buckets[i] = (total.buckets[i] ?? 0) + count));
  }
  return total;
}

async function read(store: VerificationStore, key: string): Promise<number> {
  const raw = await store.get(key);
  const value = raw === null ? 0 : Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
