import type { StoreWriteOptions, VerificationStore } from './verification-store.interface.js';

/** Past this close to the end of the expected value's life, the fallback does not write: it may end meanwhile. */
const FALLBACK_WRITE_MARGIN_MS = 1000;

/**
 * Replaces `key`'s value with `value` (null: removes it) only while it is `expected`: the store's own atomic
 * `replaceIfEquals`, else a read and then the write (a host's store without it: a write landing between the
 * two is undone). `expectedUntil` (store-clock ms): when the expected value expires; the fallback does not
 * write within a second of it, when another value may take its place between the read and the write. `options`:
 * as `set`'s, for `value`. True when replaced.
 */
export async function replaceIfEquals(
  store: VerificationStore,
  key: string,
  expected: string,
  value: string | null,
  ttlMs: number,
  expectedUntil = Number.POSITIVE_INFINITY,
  options?: StoreWriteOptions,
): Promise<boolean> {
  if (store.replaceIfEquals) return store.replaceIfEquals(key, expected, value, ttlMs, options);
  if ((await store.get(key)) !== expected) return false;
  if (store.now() > expectedUntil - FALLBACK_WRITE_MARGIN_MS) return false;
  await (value === null ? store.delete(key) : store.set(key, value, ttlMs, options));
  return true;
}
