import { SPARE_TEST_SESSION_SLOTS } from '../core/test-session.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { releaseClaim, takeClaim } from '../store/store-claim.js';
import {
  chooseSpareSlot,
  OVERFLOW_TEST_SESSION_SLOT,
  spareId,
  spareSlotIds,
  type SlotHolder,
} from './spare-test-slots.js';

/**
 * How long a slot's claim may be held (store clock): a start holds it from its read of the slot to its
 * write there (a few store round trips), then lets it go; a crashed holder's claim ends then.
 */
export const SPARE_SLOT_CLAIM_MS = 10_000;

/**
 * Reads a slot's choice may make before a start goes to the overflow: each new read follows another
 * start's claim or write of a slot, so a start gives way after as many as a slot's race could take.
 */
const SPARE_SLOT_READS = 2 * (SPARE_TEST_SESSION_SLOTS + 1);

/** A new test session's id, whether its slot was taken from another starter's held session, and its claim. */
export interface TakenSlot {
  requestId: string;
  replaced: boolean;
  /** Lets the slot's claim go, once the session is written there (none: nothing claimed). Never throws. */
  release?(): Promise<void>;
}

/** A slot another start holds the claim of: held to its end, replaceable by nobody (see `chooseSpareSlot`). */
const CLAIMED: SlotHolder = {
  status: 'sent',
  createdAt: Number.POSITIVE_INFINITY,
  expiresAt: Number.POSITIVE_INFINITY,
  replaced: true,
};

/** Store key of a slot's claim: one per slot, held while a start writes there. */
export function spareSlotClaimKey(slotId: string): string {
  return `test-number:slot-claim:{${slotId}}`;
}

/**
 * Takes a slot of `pool` for a new spare session of `startedBy` (see `chooseSpareSlot`), atomically on
 * every instance sharing the store: the chosen slot's claim is taken (set-if-absent) and the slot read
 * again under it; the start writes its session there and then lets the claim go (`release`). So two
 * starts racing for one slot never both take it: a start that finds the slot claimed chooses again with
 * it held, one that finds it changed since its read chooses again from what it holds now; past every
 * slot (or SPARE_SLOT_READS reads) it is played in the overflow, which nobody claims (whatever it held
 * is replaced). `read` answers a slot's stored session.
 */
export async function takeSpareSlot(
  store: VerificationStore,
  pool: string,
  startedBy: string | undefined,
  read: (slotId: string) => Promise<SlotHolder | null>,
): Promise<TakenSlot> {
  const slotIds = spareSlotIds(pool);
  const claimed = new Set<number>();
  for (let reads = 0; reads < SPARE_SLOT_READS; reads++) {
    const holders = await Promise.all(
      slotIds.map((slotId, slot) => (claimed.has(slot) ? CLAIMED : read(slotId))),
    );
    const { slot, replaces } = chooseSpareSlot(holders, startedBy, store.now());
    if (slot === OVERFLOW_TEST_SESSION_SLOT) break;
    const claim = await takeClaim(store, spareSlotClaimKey(slotIds[slot]!), SPARE_SLOT_CLAIM_MS);
    if (claim === null) {
      claimed.add(slot);
      continue;
    }
    // Never throws: the claim then ends on its lease.
    const release = () =>
      releaseClaim(store, claim).then(
        () => undefined,
        () => undefined,
      );
    // Under the claim: the slot still holds what the choice read (no start wrote there since).
    const now = await read(slotIds[slot]!).catch(async (error: unknown) => {
      await release();
      throw error;
    });
    if (now?.requestId === holders[slot]?.requestId)
      return { requestId: spareId(pool, slot), replaced: replaces, release };
    await release();
  }
  return { requestId: spareId(pool, OVERFLOW_TEST_SESSION_SLOT), replaced: false };
}
