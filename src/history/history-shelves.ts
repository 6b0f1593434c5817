import type { DataKeys } from '../core/data-keys.js';
import type { VerificationHistoryEntry } from './verification-history.types.js';

/**
 * The shelves of a ring, each `maxEntries` slots, each evicting only its own oldest entries:
 * - `outcome`: outcomes and right codes, the trail support reads after a takeover;
 * - `start`: paid starts and switches (each one passed protection and cost money);
 * - `other`: refusals, resumed starts and wrong codes, which anyone can cause for free.
 */
export const SHELVES = ['outcome', 'start', 'other'] as const;
export type Shelf = (typeof SHELVES)[number];

const HOUR_MS = 3_600_000;

type Entry = Omit<VerificationHistoryEntry, 'at' | 'lastAt'> & { at: number };

export function shelfOf(entry: Entry): Shelf {
  if (entry.kind === 'outcome' || (entry.kind === 'check' && entry.check === 'right')) return 'outcome';
  if ((entry.kind === 'start' && entry.resumed !== true) || entry.kind === 'switch') return 'start';
  return 'other';
}

/**
 * The key under which a refusal or a resumed start is folded: the same one (operation, error code,
 * reason, method, owner, session) within the same hour of the store's clock is one entry, counted.
 * Undefined for entries that are never folded.
 */
export function foldKey(keys: DataKeys, ring: string, entry: Entry): string | undefined {
  if (entry.kind !== 'refusal' && !(entry.kind === 'start' && entry.resumed === true)) return undefined;
  const { kind, operation, errorCode, reason, method, owner, requestId } = entry;
  const hour = Math.floor(entry.at / HOUR_MS);
  const same = JSON.stringify([kind, operation, errorCode, reason, method, owner, requestId, hour]);
  return `${ring}:fold:${keys.digest(same)}`;
}
