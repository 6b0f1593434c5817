import { TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import {
  bucketField,
  CALLERS_FIELD,
  CHARGED_FIELD,
  LEFT_FIELD,
  RESCUED_FIELD,
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

/** One method's counters of a group (country or cell) over the days; a day without starts is not read further. */
export async function sumCounters(
  store: VerificationStore,
  method: string,
  group: string,
  days: readonly string[],
): Promise<Sums> {
  const key = (day: string, field: string) => counterKey(day, method, group, field);
  const startedByDay = await Promise.all(days.map((day) => read(store, key(day, 'started'))));
  const active = days.filter((_, i) => startedByDay[i]! > 0);
  const values = await Promise.all(
    active.map((day) => Promise.all(FIELDS.map((field) => read(store, key(day, field))))),
  );
  const total = (field: string) =>
    values.reduce((sum, dayValues) => sum + dayValues[FIELDS.indexOf(field)]!, 0);
  return {
    started: startedByDay.reduce((sum, value) => sum + value, 0),
    delivered: total('delivered'),
    verified: total('verified'),
    expired: total('expired'),
    failed: total('failed'),
    chargedMinor: total(CHARGED_FIELD),
    callers: total(CALLERS_FIELD),
    left: total(LEFT_FIELD),
    unproven: total(UNPROVEN_FIELD),
    rescued: total(RESCUED_FIELD),
    buckets: Array.from({ length: BUCKET_COUNT }, (_, i) => total(bucketField(i))),
  };
}

async function read(store: VerificationStore, key: string): Promise<number> {
  const raw = await store.get(key);
  const value = raw === null ? 0 : Number(raw);
  return Number.isSafeInteger(value) && value > 0 ? value : 0;
}
