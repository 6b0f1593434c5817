import { randomBytes } from 'node:crypto';
import { SPARE_TEST_SESSION_SLOTS, spareTestRequestId } from '../core/test-session.js';
import { isTerminal, type VerificationStatus } from '../core/verification-status.js';

/** What a spare slot's choice reads of the session a slot holds (its played state). */
export interface SlotHolder {
  /** Its request id: what a start taking its slot claims the slot by (see `takeSpareSlot`). */
  requestId?: string;
  /** Keyed digest of its starter (its owner, else its client network). */
  startedBy?: string;
  status: VerificationStatus;
  createdAt: number;
  expiresAt: number;
  /** A code was checked for it: its holder has shown up (see `chooseSpareSlot`). */
  checked?: boolean;
  /** It took its slot from another starter's held session (see `chooseSpareSlot`). */
  replaced?: boolean;
}

/** A spare slot a start may take, and whether it takes it from another starter's held session. */
export interface SpareSlot {
  slot: number;
  replaces: boolean;
}

/** Whether a slot's session keeps the slot from another starter: until its end, unless it failed or expired. */
function holds(holder: SlotHolder | null, now: number): holder is SlotHolder {
  if (holder === null || holder.expiresAt <= now) return false;
  return !isTerminal(holder.status) || holder.status === 'verified';
}

/** Whether another starter's start may take a held session's slot: not once a code was checked for it or it replaced one. */
function replaceable(holder: SlotHolder): boolean {
  return holder.checked !== true && holder.status !== 'verified' && holder.replaced !== true;
}

/**
 * The pool's overflow slot, past its SPARE_TEST_SESSION_SLOTS: a start finding no slot it may take (each
 * held by a session nobody else may replace) is played there, in the place of whatever it held.
 */
export const OVERFLOW_TEST_SESSION_SLOT = SPARE_TEST_SESSION_SLOTS;

/**
 * The slot of a pool (the number's, or a network's for the number) a new spare session of `startedBy`
 * takes, given what each slot holds: the first slot no session holds (empty, or its session failed,
 * expired or past its end); else the starter's own oldest; else the newest of other starters' sessions
 * that took a free slot and that no code was checked for (the session replacing it keeps its slot from
 * other starters to its end); else the overflow slot. So whoever starts next never takes the slot of a
 * session that took one because every slot was held, nor of one whose code was entered, and a pool
 * keeps SPARE_TEST_SESSION_SLOTS + 1 sessions whoever starts.
 */
export function chooseSpareSlot(
  holders: readonly (SlotHolder | null)[],
  startedBy: string | undefined,
  now: number,
): SpareSlot {
  let own: number | undefined;
  let newest: number | undefined;
  for (let slot = 0; slot < SPARE_TEST_SESSION_SLOTS; slot++) {
    const holder = holders[slot] ?? null;
    if (!holds(holder, now)) return { slot, replaces: false };
    if (startedBy !== undefined && holder.startedBy === startedBy) {
      if (own === undefined || holder.createdAt < holders[own]!.createdAt) own = slot;
      // Of sessions started at one tick, the later slot's is the newer (slots are taken in order).
    } else if (
      replaceable(holder) &&
      (newest === undefined || holder.createdAt >= holders[newest]!.createdAt)
    )
      newest = slot;
  }
  if (own !== undefined) return { slot: own, replaces: false };
  return newest === undefined
    ? { slot: OVERFLOW_TEST_SESSION_SLOT, replaces: false }
    : { slot: newest, replaces: true };
}

/** The request ids naming each slot of `pool` (what its entries are stored under). */
export function spareSlotIds(pool: string): string[] {
  return Array.from({ length: SPARE_TEST_SESSION_SLOTS }, (_, slot) => spareTestRequestId(pool, slot, ''));
}

/** A new spare session's id in `pool`'s `slot`. */
export function spareId(pool: string, slot: number): string {
  return spareTestRequestId(pool, slot, randomBytes(6).toString('base64url'));
}
