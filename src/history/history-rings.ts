import type { DataKeys } from '../core/data-keys.js';
import { parseTypedNumber } from '../core/phone-number.js';
import { VerificationClientError } from '../core/verification.errors.js';
import type { VerificationHistoryEntry, VerificationHistoryQuery } from './verification-history.types.js';

/** An entry as the store keeps it (`at` in ms). */
export type StoredEntry = Omit<VerificationHistoryEntry, 'at' | 'lastAt'> & {
  at: number;
  seq: number;
  fold?: string;
  /** A verified session's start, copied to the `verified` shelf (same `at` and `seq`). */
  promoted?: true;
};

export function ringOf(keys: DataKeys, query: VerificationHistoryQuery, defaultCountry: string): string {
  const byNumber = query?.phoneNumber !== undefined;
  const byOwner = typeof query?.owner === 'string';
  if (byNumber === byOwner)
    throw new VerificationClientError('validation_error', 'Give either phoneNumber or owner', {
      errors: [{ field: 'phoneNumber', message: 'give either phoneNumber (E.164) or owner' }],
    });
  // The number as the routes normalise it, so `8 912 …` finds what `+7912…` wrote.
  return byNumber
    ? numberRing(keys, parseTypedNumber(query.phoneNumber, defaultCountry, 'phoneNumber').number)
    : ownerRing(keys, query.owner!);
}

// Hash tags keep a ring's keys in one Redis Cluster slot.
export function numberRing(keys: DataKeys, phoneNumber: string): string {
  return `history:{n:${keys.digest(phoneNumber)}}`;
}

export function ownerRing(keys: DataKeys, owner: string): string {
  return `history:{o:${keys.digest(owner)}}`;
}

/** Beside a slot of the `other` shelf: its entry's repeats, `<seq>:<count>:<last at>` (see `withRepeats`). */
export function repeatsKey(slot: string): string {
  return `${slot}:n`;
}

export function parseEntry(text: string): StoredEntry | null {
  try {
    const entry = JSON.parse(text) as StoredEntry;
    return typeof entry.at === 'number' && typeof entry.kind === 'string'
      ? { ...entry, seq: Number(entry.seq) || 0 }
      : null;
  } catch {
    return null;
  }
}

/**
 * A folded entry with its repeats (`<seq>:<count>:<last at>` beside its slot, written by the second and
 * later); repeats of another entry that held the slot before (another seq) are not its.
 */
export function withRepeats(entry: StoredEntry, repeats: string | null): StoredEntry & { lastAt?: number } {
  const [seq, count, lastAt] = (repeats ?? '').split(':').map(Number);
  return seq === entry.seq && count! > 1 && Number.isFinite(lastAt) ? { ...entry, count, lastAt } : entry;
}

export function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
