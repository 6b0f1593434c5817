import type { DataKeys } from '../core/data-keys.js';
import { methodTraits } from '../core/verification-method.js';
import type { VerificationHistoryEntry } from './verification-history.types.js';

/**
 * The shelves of a ring, each `maxEntries` slots, each evicting only its own oldest entries:
 * - `verified`: right codes, `verified` outcomes and the starts of the sessions they verified, which
 *   nobody causes without the number's phone (the trail support reads after a takeover);
 * - `outcome`: the other outcomes (`failed`, `expired`, `code_required`) of paid methods;
 * - `start`: starts and switches of paid methods (each one passed protection and cost money);
 * - `check`: wrong codes (each asks a session's `verification_id`, which only its starter holds);
 * - `free`: the starts, switches and unverified outcomes of a method charged on proof, which cost
 *   their starter nothing (bounded by the number's start limits);
 * - `other`: refusals and resumed starts, which anyone can cause for free (folded, see `foldKey`).
 */
export const SHELVES = ['verified', 'outcome', 'start', 'check', 'free', 'other'] as const;
export type Shelf = (typeof SHELVES)[number];

const HOUR_MS = 3_600_000;

type Entry = Omit<VerificationHistoryEntry, 'at' | 'lastAt'> & { at: number; promoted?: true };

export function shelfOf(entry: Entry): Shelf {
  if (entry.promoted === true) return 'verified';
  // A session of a method charged on proof costs its starter nothing until it verifies.
  const paid = entry.method === undefined || !methodTraits(entry.method).chargedOnProof;
  if (entry.kind === 'outcome') return entry.status === 'verified' ? 'verified' : paid ? 'outcome' : 'free';
  if (entry.kind === 'check') return entry.check === 'right' ? 'verified' : 'check';
  if ((entry.kind === 'start' && entry.resumed !== true) || entry.kind === 'switch')
    return paid ? 'start' : 'free';
  return 'other';
}

/**
 * The key under which a refusal or a resumed start is folded: the same one within the same hour of
 * the store's clock is one entry, counted. In a number's ring a refusal is the same whoever asked
 * (operation, error code, reason, method), so many owners' refusals of a number are one entry; in an
 * owner's ring, and for resumes (one session's), the owner and session count too. Undefined for
 * entries that are never folded.
 */
export function foldKey(keys: DataKeys, ring: string, entry: Entry, perNumber: boolean): string | undefined {
  if (entry.kind !== 'refusal' && !(entry.kind === 'start' && entry.resumed === true)) return undefined;
  const { kind, operation, errorCode, reason, method, requestId } = entry;
  const owner = perNumber && kind === 'refusal' ? null : entry.owner;
  const hour = Math.floor(entry.at / HOUR_MS);
  const same = JSON.stringify([kind, operation, errorCode, reason, method, owner, requestId, hour]);
  return `${ring}:fold:${keys.digest(same)}`;
}
