import { quantileFromBuckets, TIME_TO_VERIFY_BUCKETS_MS } from '../core/duration-histogram.js';
import type { DeviceHint } from '../core/journey.js';
import type { VerificationMethod } from '../core/verification-method.js';
import { CELL_LEVELS, choiceCells, type CellLevel, type Sums } from './method-figures.js';

/**
 * Sessions a figure cell must hold (ended: verified, expired or failed, less the `unproven` ones)
 * before its own figures count; a thinner cell is pooled upward (operator → country → all).
 */
export const MIN_CELL_ENDED = 30;

/** One method's figures for a number's operator and a device, from the narrowest cell that is not thin. */
export interface CellFigures {
  level: CellLevel;
  /** Sessions ended, less the unproven ones. */
  ended: number;
  verified: number;
  /**
   * verified ÷ ended. Sessions not ended yet weigh nothing: a free start nobody completes would
   * otherwise weigh against its method until it expires, or for the figures' whole window once erased.
   */
  completion: number;
  /** delivered ÷ started; null when the method's deliveries are not shown (none counted). */
  delivery: number | null;
  /** Verified sessions per time-to-verify bucket (TIME_TO_VERIFY_BUCKETS_MS). */
  buckets: readonly number[];
  /**
   * Of the `ended − verified` unverified ones, those a later step of their journey verified (the rest
   * left after the switch, or no method verified them: a switch's cost). Absent: not counted.
   */
  rescued?: number;
}

/** Reads one method's sums in cells (MethodStats.cellSums fits). */
export type CellReader = (
  method: VerificationMethod,
  cells: readonly string[],
  days: number,
) => Promise<Sums[]>;

/**
 * The method's figures for `phoneNumber`'s operator prefix and `device` over `days`: the operator ×
 * device cell once it holds MIN_CELL_ENDED ended sessions, else the country × device cell, else every
 * number's × device; undefined when even that is thin.
 */
export async function pooledFigures(
  read: CellReader,
  method: VerificationMethod,
  phoneNumber: string,
  device: DeviceHint | undefined,
  days: number,
): Promise<CellFigures | undefined> {
  return pickCell(await read(method, choiceCells(phoneNumber, device), days));
}

/** The narrowest of `sums` (one per CELL_LEVELS, narrowest first) that is not thin. */
export function pickCell(sums: readonly Sums[]): CellFigures | undefined {
  for (const [i, level] of CELL_LEVELS.entries()) {
    const cell = sums[i];
    if (cell === undefined) continue;
    const ended = cell.verified + cell.expired + cell.failed - cell.unproven;
    if (ended < MIN_CELL_ENDED) continue;
    return {
      level,
      ended,
      verified: cell.verified,
      completion: Math.min(cell.verified / ended, 1),
      delivery: cell.delivered > 0 && cell.started > 0 ? Math.min(cell.delivered / cell.started, 1) : null,
      buckets: cell.buckets,
      rescued: Math.min(cell.rescued, Math.max(ended - cell.verified, 0)),
    };
  }
  return undefined;
}

/** The share of a cell's ended sessions verified within `ms` of their start (from its buckets). */
export function completedWithin(figures: CellFigures, ms: number): number {
  let verified = 0;
  for (const [i, count] of figures.buckets.entries()) {
    const upper = TIME_TO_VERIFY_BUCKETS_MS[i] ?? Number.POSITIVE_INFINITY;
    const lower = i === 0 ? 0 : TIME_TO_VERIFY_BUCKETS_MS[i - 1]!;
    if (upper <= ms) verified += count;
    else if (lower < ms && Number.isFinite(upper)) verified += (count * (ms - lower)) / (upper - lower);
  }
  return Math.min(verified / figures.ended, 1);
}

/** The time by which a share `q` (0..1) of the cell's verified sessions had verified; null when none. */
export function verifiedQuantile(figures: CellFigures, q: number): number | null {
  return quantileFromBuckets(figures.buckets, q);
}
