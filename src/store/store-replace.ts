import type { VerificationStore } from './verification-store.interface.js';

/**
 * Replaces `key`'s value with `value` (null: removes it) only while it is `expected`: the store's own atomic
 * `replaceIfEquals`, else a read and then the write (a host's store without it: a write landing between the
 * two is undone). True when replaced.
 */
export async function replaceIfEquals(
  store: VerificationStore,
  key: string,
  expected: string,
  value: string | null,
  ttlMs: number,
): Promise<boolean> {
  if (store.replaceIfEquals) return store.replaceIfEquals(key, expected, value, ttlMs);
  if ((await store.get(key)) !== expected) return false;
  await (value === null ? store.delete(key) : store.set(key, value, ttlMs));
  return true;
}
