import { toMajorUnits } from '../core/money.js';
import { LEDGER_DIMENSIONS, type LedgerRowKey } from './ledger-row.js';

/** The session counts a row keeps, as the transitions the module saw. */
/** What a ledger row counts, besides the money. */
export type LedgerCount = 'started' | 'delivered' | 'verified' | 'expired' | 'failed';
export const LEDGER_COUNTS: readonly LedgerCount[] = [
  'started',
  'delivered',
  'verified',
  'expired',
  'failed',
];
/** The row's counter of expected charges, in minor units. */
export const CHARGED = 'charged';

/** A row's or a day's figures. */
export interface LedgerFigures extends Readonly<Record<LedgerCount, number>> {
  /** What the API should have charged by its billing rules (major units, RUB). */
  expected: number;
  /** `expected` per verified session; null with none verified. */
  costPerVerified: number | null;
}

export type LedgerRow = LedgerRowKey & LedgerFigures;

/** The API's word on a day (`GET /v1/usage` for that date), as last read. */
export interface LedgerUsage {
  charged: number;
  verifications: number;
  verified: number;
  readAt: Date;
}

/** One UTC day of the ledger: `VerificationLedger.report`. */
export interface LedgerDayReport {
  date: string;
  currency: string;
  /**
   * The day is over and its sessions have ended (an hour past midnight UTC): its figures no longer
   * move, and a drift is announced. Before that a drift shown may be charges still on their way.
   */
  final: boolean;
  rows: LedgerRow[];
  totals: LedgerFigures;
  /** null while the usage could not be read. */
  usage: LedgerUsage | null;
  /** `usage.charged - totals.expected`; null without a usage reading. */
  drift: number | null;
  tolerance: number;
  /** |drift| is above the tolerance. */
  beyondTolerance: boolean;
}

/** A row's figures from its counters (minor units for the charge). */
export function figuresOf(counts: Readonly<Record<LedgerCount | typeof CHARGED, number>>): LedgerFigures {
  const expected = toMajorUnits(counts[CHARGED]);
  return {
    ...(Object.fromEntries(LEDGER_COUNTS.map((c) => [c, counts[c]])) as Record<LedgerCount, number>),
    expected,
    costPerVerified:
      counts.verified > 0 ? Math.round((counts[CHARGED] / counts.verified) * 100) / 10_000 : null,
  };
}

/** Major units as their minor-unit integer (a drift or tolerance compared without float error). */
export function minorOf(major: number): number {
  return Math.round(major * 100);
}

/**
 * The day as CSV (RFC 4180, CRLF): a header, one line per row, then a `total` line. A text cell that
 * a spreadsheet would run as a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage return,
 * as an operator prefix `+7912` does) is given a leading `'`; numbers are written as numbers.
 */
export function ledgerCsv(report: LedgerDayReport): string {
  const header = [
    'date',
    ...LEDGER_DIMENSIONS,
    ...LEDGER_COUNTS,
    'expected',
    'cost_per_verified',
    'currency',
  ];
  const line = (key: LedgerRowKey, f: LedgerFigures): unknown[] => [
    report.date,
    ...LEDGER_DIMENSIONS.map((d) => key[d]),
    ...LEDGER_COUNTS.map((c) => f[c]),
    f.expected,
    f.costPerVerified ?? '',
    report.currency,
  ];
  const totalKey = Object.fromEntries(
    LEDGER_DIMENSIONS.map((d, i) => [d, i === 0 ? 'total' : '']),
  ) as LedgerRowKey;
  const lines = [header, ...report.rows.map((row) => line(row, row)), line(totalKey, report.totals)];
  return lines.map((cells) => cells.map(csvCell).join(',')).join('\r\n') + '\r\n';
}

/** One CSV cell: formula-like text defused, then quoted when it holds a comma, quote or line break. */
export function csvCell(value: unknown): string {
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  let text = String(value ?? '');
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}
