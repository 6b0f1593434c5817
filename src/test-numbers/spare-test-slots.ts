import { randomBytes } from 'node:crypto';
import { SPARE_TEST_SESSION_SLOTS, spareTestRequestId } from '../core/test-session.js';
import { isTerminal, type VerificationStatus } from '../core/verification-status.js';

/** What a spare slot's choice reads of the session a slot holds (its played state). */
export interface SlotHolder {
  /** Keyed digest of its starter (its owner, else its client network). */
  startedBy?: string;
  status: VerificationStatus;
  createdAt: number;
  expiresAt: number;
}

/**
 * The pool's overflow slot, its last: a start that finds every slot held by other starters' sessions
 * takes it, in the place of whatever it held.
 */
export const OVERFLOW_TEST_SESSION_SLOT = SPARE_TEST_SESSION_SLOTS - 1;

/** Whether a slot's session keeps the slot from another starter: until its end, unless it failed or expired. */
function holds(holder: SlotHolder | null, now: number): holder is SlotHolder {
  if (holder === null || holder.expiresAt <= now) return false;
  return !isTerminal(holder.status) || holder.status === 'verified';
}

/**
 * The slot of a pool (the number's, or a network's for the number) a new spare session of `startedBy`
 * takes, given what each slot holds: the first slot no session holds (empty, or its session failed,
 * expired or past its end); else the starter's own oldest; else the overflow slot. So a stranger's starts
 * replace another starter's session, while that one may still be checked or read verified, only in the
 * overflow slot, and a pool keeps SPARE_TEST_SESSION_SLOTS sessions whoever starts.
 */
export function chooseSpareSlot(
  holders: readonly (SlotHolder | null)[],
  startedBy: string | undefined,
  now: number,
): number {
  let own: number | undefined;
  for (let slot = 0; slot < SPARE_TEST_SESSION_SLOTS; slot++) {
    const holder = holders[slot] ?? null;
    if (!holds(holder, now)) return slot;
    if (startedBy !== undefined && holder.startedBy === startedBy)
      if (own === undefined || holder.createdAt < holders[own]!.createdAt) own = slot;
  }
  return own ?? OVERFLOW_TEST_SESSION_SLOT;
}

/** The request ids naming each slot of `pool` (what its entries are stored under). */
export function spareSlotIds(pool: string): string[] {
  return Array.from({ length: SPARE_TEST_SESSION_SLOTS }, (_, slot) => spareTestRequestId(pool, slot, ''));
}

/** A new spare session's id in `pool`'s `slot`. */
export function spareId(pool: string, slot: number): string {
  return spareTestRequestId(pool, slot, randomBytes(6).toString('base64url'));
}
