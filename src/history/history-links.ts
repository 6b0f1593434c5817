import type { VerificationStore } from '../store/verification-store.interface.js';

/**
 * Which rings of the other side hold entries of a ring's subject: a number's ring links each owner ring an
 * entry of the number was written to, an owner's ring each number ring an entry naming the owner was
 * written to; both ways whichever side wrote (so that an erasure, through the ring's own links, also
 * removes the other side's links to it). An erasure reaches them through these links, not only through
 * the subject's own entries, which a ring's bound pushes out (and a number's ring folds many owners'
 * refusals into the first one's).
 *
 * Per ring: a slot per linked ring (`<ring>:links:<i>` → the other ring's name), the slot's index under
 * the pair (`<ring>:link:<other's tag>`), and the count of slots taken (`<ring>:links`). Each entry
 * renews its link (retentionDays), so a link outlives the entries it leads to; a slot is never reused
 * while the count lives (it is renewed with every link), nor while it holds a link (with retentionDays
 * lowered, the count ends before links written for longer: a new link takes a free slot, a renewed one
 * raises the count to its own).
 */

/** The most links an erasure reads of one ring. */
const LINKS_READ_AT_MOST = 100_000;

const RENEWED = { renew: true } as const;

/** A pair claimed, its slot not yet taken. */
const PENDING = '-';

/**
 * How long a claim waits for its slot: a first link that failed after claiming its pair (a store error, a
 * process gone) holds the pair's later links back this long, not for the link's whole life.
 */
const CLAIM_MS = 60_000;

/** `history:{n:…}` → `n:…` (a key's one hash tag stays its ring's). */
function tagOf(ring: string): string {
  return ring.replace(/^history:\{(.*)\}$/, '$1');
}

function pairKey(ring: string, other: string): string {
  return `${ring}:link:${tagOf(other)}`;
}

function countKey(ring: string): string {
  return `${ring}:links`;
}

function slotKey(ring: string, index: string | number): string {
  return `${ring}:links:${index}`;
}

/** Links `ring` to `other` (or renews the link) for `ttlMs`. */
export async function linkRing(
  store: VerificationStore,
  ring: string,
  other: string,
  ttlMs: number,
): Promise<void> {
  const pair = pairKey(ring, other);
  // The pair is claimed before its slot is taken: links of one pair written at once take one slot.
  const first = await store.setIfAbsent(pair, PENDING, Math.min(ttlMs, CLAIM_MS));
  const taken = first ? null : await store.get(pair);
  let { value } = await store.increment(countKey(ring), first ? 1 : 0, ttlMs, RENEWED);
  // Its first link is being written now (or has just ended): that one renews it.
  if (!first && (taken === null || taken === PENDING)) return;
  if (taken !== null) {
    // The count restarted under a link written for longer (retentionDays lowered since): read up to it.
    if (value <= Number(taken))
      await store.increment(countKey(ring), Number(taken) + 1 - value, ttlMs, RENEWED);
    await Promise.all([store.set(pair, taken, ttlMs), store.set(slotKey(ring, taken), other, ttlMs)]);
    return;
  }
  // A slot still held (written for longer than the count lives) is not taken over: the next one is.
  for (let tries = 1; !(await store.setIfAbsent(slotKey(ring, value - 1), other, ttlMs)); tries++) {
    if (tries >= LINKS_READ_AT_MOST) return;
    ({ value } = await store.increment(countKey(ring), 1, ttlMs, RENEWED));
  }
  await store.set(pair, String(value - 1), ttlMs);
}

/** The rings `ring` links, and every key of its links (to delete with the ring). */
export async function readLinks(
  store: VerificationStore,
  ring: string,
): Promise<{ rings: string[]; keys: string[] }> {
  const count = Math.min(Number(await store.get(countKey(ring))) || 0, LINKS_READ_AT_MOST);
  const slots = Array.from({ length: count }, (_, i) => slotKey(ring, i));
  const values = await Promise.all(slots.map((key) => store.get(key)));
  const rings = values.filter((value): value is string => value?.startsWith('history:{') === true);
  return { rings, keys: [countKey(ring), ...slots, ...rings.map((other) => pairKey(ring, other))] };
}

/** Removes `other`'s link to `ring` (an erased ring), if it has one. */
export async function unlinkRing(store: VerificationStore, other: string, ring: string): Promise<void> {
  const pair = pairKey(other, ring);
  const index = await store.get(pair);
  await Promise.all([store.delete(pair), ...(index === null ? [] : [store.delete(slotKey(other, index))])]);
}
