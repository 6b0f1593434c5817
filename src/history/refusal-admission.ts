import type { DataKeys } from '../core/data-keys.js';
import type { VerificationStore } from '../store/verification-store.interface.js';

/**
 * How many new refusal entries one caller (each of its address, network and owner) may write per hour
 * into rings no paid entry made (see `refusalAdmission`); past it, such refusals are only counted (one
 * store counter per caller and hour), so what a free request adds to the store is bounded per address
 * and network. A repeat (folded) and a refusal into a ring with a paid entry never spend it.
 */
export const REFUSAL_ENTRIES_PER_CALLER_HOUR = 30;

export const HOUR_MS = 3_600_000;

/** The store key of a caller's hourly budget of refusal entries (`owner:…`, `address:…`, `network:…`), by keyed digest. */
export function refusalBudgetKey(keys: { digest(value: string): string }, caller: string): string {
  return `history:refusals:${keys.digest(caller)}`;
}

/** Set (for `retentionDays`) by every entry of a paid shelf of a ring (see `shelfOf`). */
export function paidKey(ring: string): string {
  return `${ring}:paid`;
}

/**
 * Whether one refusal's new entry goes into a ring: always when the ring holds a paid entry (a start,
 * switch, check or outcome): what a ring holds is bounded by its shelves whoever writes, and such rings
 * are as many as paid starts made, so no stranger's spending rations what is written of that number
 * (or owner). Otherwise (a ring free requests alone would create) the callers' budget decides, spent
 * once per refusal whatever the rings: false when any caller is past it; no caller known (a host's own
 * call), true; a store error, false (history never fails a verification).
 */
export function refusalAdmission(
  store: VerificationStore,
  keys: DataKeys,
  callers: readonly string[],
): (ring: string) => Promise<boolean> {
  let budget: Promise<boolean> | undefined;
  const spend = async (): Promise<boolean> => {
    const counts = await Promise.all(
      callers.map((caller) =>
        // One per caller: evictable, as the per-client counters are (a flood of addresses evicts only those).
        store.increment(refusalBudgetKey(keys, caller), 1, HOUR_MS, { evictable: true }),
      ),
    );
    return counts.every(({ value }) => value <= REFUSAL_ENTRIES_PER_CALLER_HOUR);
  };
  return async (ring) => (await store.get(paidKey(ring))) !== null || (budget ??= spend().catch(() => false));
}
