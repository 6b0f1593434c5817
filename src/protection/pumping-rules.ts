import type { ResolvedPumping } from '../options/verification.options.js';

/**
 * The pumping defence's scoring rules: pure functions of counts, no I/O (PumpingDefence reads the
 * counts from the store and applies the verdict).
 */

/**
 * What a start is counted against: its number's range and operator prefix (judged on their own),
 * and its callers. `network` is the client's IPv6 /64 (or IPv4 address) when the host keys clients
 * otherwise.
 */
export type PumpingSubjectKind = 'range' | 'prefix' | 'owner' | 'client' | 'network';

/** One subject's counts in the sliding window, before the start being judged. */
export interface SubjectCounts {
  /** Starts that could be charged, each one, and attempts a hold refused (money, not numbers). */
  starts: number;
  /** Distinct numbers verified (a number verified again in the window is not a new proof). */
  verified: number;
  /**
   * Average distinct verified numbers per window over the previous day (ranges, prefixes,
   * countries), else undefined: their normal rate, which only proofs raise, never starts.
   */
  baseline?: number;
  /** A caller's completed verification within `recordTtlMs` (callers only). */
  known: boolean;
  /** The current fixed window's raw start count (to add starts counted concurrently since the read). */
  current?: number;
  /** Ranges and prefixes: starts of a number new to it from a caller new to it, in the window (the burst signature). */
  callers?: number;
  /** The current fixed window's raw count of distinct callers. */
  currentCallers?: number;
}

/** The options the rules read (`limits.pumping`, resolved). */
export type PumpingThresholds = Pick<
  ResolvedPumping,
  | 'rangeMinStarts'
  | 'prefixMinStarts'
  | 'freshRangeMinStarts'
  | 'freshPrefixMinStarts'
  | 'callerMinStarts'
  | 'countryMinStarts'
  | 'underAttackMinStarts'
  | 'minConversion'
  | 'surgeFactor'
>;

/**
 * A number's own starts in the window taken out of its range's and prefix's count when its next
 * start is judged: a first start, a resend and a switch. An owner who retries is never held by
 * their own retries; a number started more often than that (pumped) weighs like anyone's.
 */
export const OWNER_RETRIES = 3;

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
 * Whether a range or prefix has a history of its own: numbers verified in it yesterday or in the
 * window. Only proofs make one (a start never does, and a caller's record does not vouch for a range).
 */
export function hasHistory(counts: SubjectCounts): boolean {
  return counts.verified > 0 || (counts.baseline ?? 0) > 0;
}

/**
 * The unconverted starts a subject takes before it is held: the normal minimum, or, while its
 * country is under attack, the lowest one for ranges and prefixes with no conversion in the window
 * and for callers without a record.
 */
export function minUnconvertedFor(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  rules: PumpingThresholds,
): number {
  if (kind === 'range' || kind === 'prefix') {
    const normal = kind === 'range' ? rules.rangeMinStarts : rules.prefixMinStarts;
    return underAttack && counts.verified === 0 ? Math.min(normal, rules.underAttackMinStarts) : normal;
  }
  const normal = rules.callerMinStarts;
  return underAttack && !counts.known ? Math.min(normal, rules.underAttackMinStarts) : normal;
}

/**
 * The burst signature: a range or prefix with no history that took at least `freshRangeMinStarts`
 * (`freshPrefixMinStarts`) starts of new numbers from new callers in the window, unconverted. Real
 * users of a range nobody verified in arrive one at a time and convert; starts into many of its
 * numbers from many addresses are an attack's. One caller's starts, or one number's, are the normal
 * rule's and the per-number limits' business.
 */
export function freshBurst(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  rules: PumpingThresholds,
): boolean {
  if ((kind !== 'range' && kind !== 'prefix') || hasHistory(counts)) return false;
  const min = kind === 'range' ? rules.freshRangeMinStarts : rules.freshPrefixMinStarts;
  return doesNotConvert({ ...counts, starts: counts.callers ?? 0 }, min, rules);
}

/** Which rule holds a subject, as `verification.fraud_suspected` names it. */
export type PumpingRule = 'unconverted' | 'fresh_burst' | 'country_under_attack';

/** The rule that holds a subject (see holds), or undefined. */
export function ruleOf(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  rules: PumpingThresholds,
): PumpingRule | undefined {
  if (doesNotConvert(counts, minUnconvertedFor(kind, counts, false, rules), rules)) return 'unconverted';
  if (freshBurst(kind, counts, rules)) return 'fresh_burst';
  if (underAttack && doesNotConvert(counts, minUnconvertedFor(kind, counts, true, rules), rules))
    return 'country_under_attack';
  return undefined;
}

/**
 * The first subject (in the given order) that is to be held, or undefined. A shared address (a
 * client key or network: carrier NAT, an office) is not by itself a reason to hold a start whose
 * range and prefix convert: the address's other users are not this one.
 */
export function subjectToHold<T extends { kind: PumpingSubjectKind; counts: SubjectCounts }>(
  subjects: T[],
  underAttack: boolean,
  rules: PumpingThresholds,
): T | undefined {
  const converts = (kind: PumpingSubjectKind): boolean => {
    const s = subjects.find((x) => x.kind === kind);
    return s !== undefined && converting(s.counts, rules);
  };
  const numberConverts = converts('range') && converts('prefix');
  return subjects.find(
    (s) =>
      !((s.kind === 'client' || s.kind === 'network') && numberConverts) &&
      ruleOf(s.kind, s.counts, underAttack, rules) !== undefined,
  );
}

/** Whether a subject's window shows conversions at or above `minConversion`. */
export function converting(counts: SubjectCounts, rules: Pick<PumpingThresholds, 'minConversion'>): boolean {
  return counts.verified > 0 && counts.verified >= rules.minConversion * counts.starts;
}

/**
 * Whether a running hold still stands: it ends early once the subject converts again (its starts
 * completing, e.g. a legitimate range held while its first users were still typing their codes).
 */
export function holdStands(counts: SubjectCounts, rules: Pick<PumpingThresholds, 'minConversion'>): boolean {
  return !converting(counts, rules);
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

/**
 * The operator prefix of an E.164 number: its calling code and national destination code (+7 985),
 * as the international format's first group gives it (libphonenumber's own way to find the NDC);
 * the calling code alone when the format has no such group.
 */
export function operatorPrefix(parsed: {
  countryCallingCode: string;
  formatInternational(): string;
}): string {
  const groups = parsed.formatInternational().split(' ');
  const ndc = groups.length > 2 ? groups[1]!.replace(/\D/g, '') : '';
  return `+${parsed.countryCallingCode}${ndc}`;
}

/** The range of an E.164 number: without its last `digits` digits (never shorter than `+` and one digit). */
export function numberRange(e164: string, digits: number): string {
  return e164.slice(0, Math.max(2, e164.length - digits));
}
