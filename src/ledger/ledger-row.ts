import { operatorPrefixOf } from '../core/operator-prefix.js';
import type { SessionRecord } from '../core/session-record.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';

/**
 * The dimensions a ledger row is kept by, in the order its key names them. A new dimension (a
 * verification's purpose) is added here, in `LedgerRowKey` and in `rowKeyOf`, and nowhere else: the
 * store keys, the report and the CSV columns follow this list.
 */
/** What a ledger row is per, besides its day. */
export type LedgerDimension = 'method' | 'prefix';
export const LEDGER_DIMENSIONS: readonly LedgerDimension[] = ['method', 'prefix'];
export type LedgerRowKey = Readonly<Record<LedgerDimension, string>>;

/** A method the package does not know is kept as `other` (the rows stay few whatever the API sends). */
export const OTHER = 'other';

/** The row a session's figures go to: its method and its number's operator prefix (+7912). */
export function rowKeyOf(record: Pick<SessionRecord, 'method' | 'phoneNumber'>): LedgerRowKey {
  return {
    method: (VERIFICATION_METHODS as readonly string[]).includes(record.method) ? record.method : OTHER,
    prefix: operatorPrefixOf(record.phoneNumber),
  };
}

/** The same row with every dimension but the method folded into `other` (a full day's overflow row). */
export function overflowOf(key: LedgerRowKey): LedgerRowKey {
  return Object.fromEntries(
    LEDGER_DIMENSIONS.map((d) => [d, d === 'method' ? key.method : OTHER]),
  ) as LedgerRowKey;
}

/** A row's name in the store: its dimensions' values in order, each URI-encoded, joined by `|`. */
export function rowId(key: LedgerRowKey): string {
  return LEDGER_DIMENSIONS.map((d) => encodeURIComponent(key[d])).join('|');
}

/** The row a stored name stands for; undefined for a name of another shape. */
export function parseRowId(id: string): LedgerRowKey | undefined {
  const parts = id.split('|');
  if (parts.length !== LEDGER_DIMENSIONS.length) return undefined;
  try {
    return Object.fromEntries(
      LEDGER_DIMENSIONS.map((d, i) => [d, decodeURIComponent(parts[i]!)]),
    ) as LedgerRowKey;
  } catch {
    return undefined;
  }
}
