/** The balance reading the next one is compared with (minor units). */
export interface BalanceMark {
  amount: number;
  /** The ledger's all-time charge counter at the reading. */
  charged: number;
  at: number;
  /** The last comparison found more debited than charged: a second one in a row announces it. */
  suspect?: true;
}

/** What a reading does: moves the mark, marks the last one suspect, or announces a drift (and moves the mark). */
export type BalanceStep =
  | { kind: 'move' }
  | { kind: 'suspect'; mark: BalanceMark }
  | { kind: 'drift'; expected: number; debited: number };

/**
 * The balance's fall since the last mark against the charges counted meanwhile: more debited than
 * counted by over `toleranceMinor` marks the last reading suspect (a charge learned late is not a
 * drift), and a second such reading in a row is a drift. A rise (a top-up, a credit), a first
 * reading, or a charge counter that started again just moves the mark.
 */
export function balanceStep(
  last: BalanceMark | undefined,
  mark: BalanceMark,
  toleranceMinor: number,
): BalanceStep {
  if (!last || mark.charged < last.charged) return { kind: 'move' };
  const debited = last.amount - mark.amount;
  const expected = mark.charged - last.charged;
  if (debited - expected <= toleranceMinor) return { kind: 'move' };
  return last.suspect
    ? { kind: 'drift', expected, debited }
    : { kind: 'suspect', mark: { ...last, suspect: true } };
}

/** A stored mark, or undefined for anything else. */
export function parseMark(raw: string | null): BalanceMark | undefined {
  if (raw === null) return undefined;
  try {
    const mark = JSON.parse(raw) as BalanceMark;
    return Number.isSafeInteger(mark.amount) && Number.isSafeInteger(mark.charged) ? mark : undefined;
  } catch {
    return undefined;
  }
}
