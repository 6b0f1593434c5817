import type { ResolvedPumping } from '../options/verification.options.js';

/**
 * The pumping defence's scoring rules: pure functions of counts, no I/O (PumpingDefence reads the
 * counts from the store and applies the verdict).
 */

/** What a start is counted against. `network` is the client's IPv6 /64 (or IPv4 address) when the host keys clients otherwise. */
export type PumpingSubjectKind = 'range' | 'owner' | 'client' | 'network';

/** One subject's counts in the sliding window, before the start being judged. */
export interface SubjectCounts {
  /** Starts let through by the defence (for a country, held ones too: the attack going on). */
  starts: number;
  verified: number;
  /** Average starts per window over the previous day (ranges and countries), else undefined. */
  baseline?: number;
  /** A completed verification within `recordTtlMs`. */
  known: boolean;
}

/** The options the rules read (`limits.pumping`, resolved). */
export type PumpingThresholds = Pick<
  ResolvedPumping,
  | 'rangeMinStarts'
  | 'callerMinStarts'
  | 'countryMinStarts'
  | 'underAttackMinStarts'
  | 'minConversion'
  | 'surgeFactor'
>;

/** Starts that did not (yet) complete. */
export function unconverted(counts: SubjectCounts): number {
  return Math.max(0, counts.starts - counts.verified);
}

/**
 * Whether a subject's traffic does not convert: at least `minUnconverted` unconverted starts, a
 * conversion below `minConversion`, and (when a baseline is known) starts far above it.
 */
export function doesNotConvert(
  counts: SubjectCounts,
  minUnconverted: number,
  rules: Pick<PumpingThresholds, 'minConversion' | 'surgeFactor'>,
): boolean {
  if (unconverted(counts) < minUnconverted) return false;
  if (counts.verified >= rules.minConversion * counts.starts) return false;
  return counts.baseline === undefined || counts.starts > rules.surgeFactor * counts.baseline;
}

/** A country is under attack when its own traffic does not convert, at its (higher) minimum volume. */
export function countryUnderAttack(country: SubjectCounts, rules: PumpingThresholds): boolean {
  return doesNotConvert(country, rules.countryMinStarts, rules);
}

/**
 * The unconverted starts a subject takes before it is held: the normal minimum, or, while its
 * country is under attack, the lower one for subjects without a record (known ones keep the normal
 * minimum: they are served first).
 */
export function minUnconvertedFor(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  rules: PumpingThresholds,
): number {
  const normal = kind === 'range' ? rules.rangeMinStarts : rules.callerMinStarts;
  return underAttack && !counts.known ? Math.min(normal, rules.underAttackMinStarts) : normal;
}

/** The first subject (in the given order) that is to be held, or undefined. */
export function subjectToHold<T extends { kind: PumpingSubjectKind; counts: SubjectCounts }>(
  subjects: T[],
  underAttack: boolean,
  rules: PumpingThresholds,
): T | undefined {
  return subjects.find((s) =>
    doesNotConvert(s.counts, minUnconvertedFor(s.kind, s.counts, underAttack, rules), rules),
  );
}

/**
 * Whether a running hold still stands: it ends early once the subject converts again (its starts
 * completing, e.g. a legitimate range held while its first users were still typing their codes).
 */
export function holdStands(counts: SubjectCounts, rules: Pick<PumpingThresholds, 'minConversion'>): boolean {
  return !(counts.verified > 0 && counts.verified >= rules.minConversion * counts.starts);
}

/** The cool-off of the `level`th hold in a row (0 first): doubled each time, at most `maxMs`. */
export function coolOffMs(level: number, holdMs: number, maxMs: number): number {
  return Math.min(maxMs, holdMs * 2 ** Math.min(level, 30));
}

/**
 * Whether the spend cap's reserve refuses a start: while the country is under attack, past
 * `1 - reserveShare` of the cap, a start whose range and callers have no record waits.
 */
export function reserveRefuses(input: {
  spentShare: number;
  reserveShare: number;
  underAttack: boolean;
  known: boolean;
}): boolean {
  if (input.reserveShare <= 0 || !input.underAttack || input.known) return false;
  return input.spentShare >= 1 - input.reserveShare;
}

/** Counts over a sliding window from two fixed windows: the current one and the previous one, weighted by its overlap. */
export function slidingCount(current: number, previous: number, elapsedShare: number): number {
  const share = Math.min(Math.max(elapsedShare, 0), 1);
  return current + previous * (1 - share);
}

/** The range of an E.164 number: without its last `digits` digits (never shorter than `+` and one digit). */
export function numberRange(e164: string, digits: number): string {
  return e164.slice(0, Math.max(2, e164.length - digits));
}
