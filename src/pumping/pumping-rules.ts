import { DAY_MS } from '../core/clock.js';
import type { ResolvedPumping } from '../options/verification.options.js';
import { countsAt, type SubjectCounts } from './pumping-counts.js';
import { PAST_NETWORKS_FLAG } from './giver-shares.js';

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

/**
 * When a hold ending at `until` really lifts: the first moment from then on at which its subject,
 * with nothing more started, is no longer held by any rule (a hold that ends while the rule still
 * applies is followed by another). Looked up in steps of a sixtieth of the window up to two windows
 * after the read, when every count of the window has rolled out; then, for the day's judgement, in
 * steps of a window up to two days after it.
 */
export function liftsAt(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  until: number,
  rules: PumpingThresholds,
): number {
  const raw = counts.raw;
  if (raw === undefined) return until;
  const step = Math.max(1, Math.ceil(raw.windowMs / 60));
  const end = (Math.floor(raw.at / raw.windowMs) + 2) * raw.windowMs;
  for (let t = until; t < end; t += step)
    if (ruleOf(kind, countsAt(counts, t), underAttack, rules) === undefined) return t;
  if (counts.day?.raw === undefined) return Math.max(until, end);
  const dayEnd = (Math.floor(raw.at / DAY_MS) + 2) * DAY_MS;
  for (let t = Math.max(until, end); t < dayEnd; t += raw.windowMs)
    if (ruleOf(kind, countsAt(counts, t), underAttack, rules) === undefined) return t;
  return Math.max(until, dayEnd);
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

/**
 * A country is under attack when its own traffic does not convert, at its (higher) minimum volume:
 * in the window, or over the day (a slow drip); or when it falls short of its prior (belowPrior)
 * over the window, the day or the week: a fresh host is judged from its first hour, and a drip hidden
 * among users who convert shows as a shortfall that grows with time where chance does not; or when
 * PAST_NETWORKS_FLAG distinct networks past their share started in it on one UTC day (giver-shares.ts).
 */
export function countryUnderAttack(country: SubjectCounts, rules: PumpingThresholds): boolean {
  return (
    (country.networksPast ?? 0) >= PAST_NETWORKS_FLAG ||
    doesNotConvert(country, rules.countryMinStarts, rules) ||
    slowDrip('country', country, rules) ||
    countryBelowPrior(country, rules)
  );
}

/** Whether a country's window, day or week falls short of its prior (see belowPrior). */
export function countryBelowPrior(
  country: SubjectCounts,
  rules: Pick<PumpingThresholds, 'countryMinStarts'>,
): boolean {
  // Starts of the last minutes are left out (their users may still be typing: a crowd is not a
  // shortfall), up to the country's usual rate over as long: a burst beyond it is judged at once.
  const recent = recentExcused(country);
  const short = (c: { starts: number; verified: number } | undefined, expected: number | undefined) =>
    c !== undefined &&
    belowPrior(Math.max(0, c.starts - recent), c.verified, expected, rules.countryMinStarts);
  // The window is judged against what the country's users completed over the rest of its week, when
  // that is surely above the prior: a crowd converting as usual hides no pumping in its hour.
  return (
    short(country, learnedExpectation(country)) ||
    short(country.day, country.expected) ||
    short(country.week, country.expected)
  );
}

/** How long a user takes to type the code they were sent: at the usual rate, the starts still typing. */
export const TYPING_MS = 2 * 60_000;

/**
 * The recent starts left out of a country's judgement: its starts of the last minutes (`recent`,
 * over `recentMs`), at most as many as the rest of its window starts in TYPING_MS at its usual
 * rate: the users still typing their codes at that rate. A crowd's typing is excused at the usual
 * rate; starts beyond it (a burst into the minutes the prior would not look at) are judged at once.
 * None without a window to learn the rate from.
 */
export function recentExcused(country: SubjectCounts): number {
  const recent = country.recent ?? 0;
  const span = country.recentMs;
  const windowMs = country.raw?.windowMs;
  if (recent <= 0 || span === undefined || windowMs === undefined || windowMs <= span) return 0;
  const usual = (Math.max(0, country.starts - recent) * TYPING_MS) / (windowMs - span);
  return Math.min(recent, usual);
}

/** Starts outside the window a country's own rate is learned from (below them, the prior alone). */
export const LEARNED_MIN_STARTS = 200;

/**
 * The expectation the window is judged against: the prior, or the lower bound (two standard
 * errors) of the conversion over the week outside the window, whichever is higher, below 0.99.
 */
export function learnedExpectation(country: SubjectCounts): number | undefined {
  const prior = country.expected;
  if (prior === undefined || country.week === undefined) return prior;
  const starts = country.week.starts - country.starts;
  if (starts < LEARNED_MIN_STARTS) return prior;
  const rate = Math.min(1, Math.max(0, country.week.verified - country.verified) / starts);
  const bound = rate - 2 * Math.sqrt((rate * (1 - rate)) / starts);
  return Math.min(0.99, Math.max(prior, bound));
}

/** Standard deviations of chance past which a shortfall from the prior is an attack's. */
export const PRIOR_Z = 3;

/**
 * Whether `verified` of `starts` falls short of the prior `expected` by more than chance explains:
 * at least `minUnconverted` unconverted, and a shortfall (expected × starts − verified) above
 * `z` (PRIOR_Z) binomial standard deviations. An attacker's never-converting starts add about `expected`
 * each; real users completing as expected add nothing on average.
 */
export function belowPrior(
  starts: number,
  verified: number,
  expected: number | undefined,
  minUnconverted: number,
  z = PRIOR_Z,
): boolean {
  if (expected === undefined || starts - verified < minUnconverted) return false;
  return expected * starts - verified > z * Math.sqrt(starts * expected * (1 - expected));
}

/**
 * A start past a giver's share, judged by its country's twin: as a country, or when the twin's day or
 * week, its recent starts left out (users may be typing), falls short of the prior at all. Its giver spent
 * chance's allowance (its share): others' conversions carry its excess only while they cover it.
 */
export function pastShareUnderAttack(twin: SubjectCounts, rules: PumpingThresholds): boolean {
  const [recent, min] = [twin.recent ?? 0, rules.underAttackMinStarts];
  const short = (c?: { starts: number; verified: number }) =>
    c !== undefined && belowPrior(Math.max(0, c.starts - recent), c.verified, twin.expected, min, 0);
  return countryUnderAttack(twin, rules) || short(twin.day) || short(twin.week);
}

/**
 * Distinct ranges verified in (today or yesterday) that give an operator prefix a history: one
 * range's numbers, however many, do not vouch for the prefix (a farm of SIM cards is bought in one
 * range), a few ranges of real users do.
 */
export const HISTORY_RANGES = 3;

/**
 * Whether a subject has a history of its own. A range: numbers verified in it yesterday or in the
 * window. A prefix or country: HISTORY_RANGES distinct ranges verified in, today or yesterday. Only
 * proofs make one (a start never does, and a caller's record does not vouch for a range).
 */
export function hasHistory(kind: PumpingSubjectKind | 'country', counts: SubjectCounts): boolean {
  if (kind !== 'prefix' && kind !== 'country') return counts.verified > 0 || (counts.baseline ?? 0) > 0;
  return (counts.ranges ?? 0) >= HISTORY_RANGES;
}

/**
 * The slow drip's judgement: a prefix's or country's starts over the last day do not convert, at
 * its window minimum (`prefixMinStarts`, `countryMinStarts`), against its normal daily rate
 * (distinct ranges verified in yesterday). A patient attacker who spreads starts thin in time and
 * across ranges stays under every window's minimum; a day of them does not.
 */
export function slowDrip(
  kind: 'prefix' | 'country',
  counts: SubjectCounts,
  rules: PumpingThresholds,
): boolean {
  const day = counts.day;
  if (day === undefined) return false;
  return doesNotConvert(
    { starts: day.starts, verified: day.verified, baseline: day.baseline, known: false },
    kind === 'country' ? rules.countryMinStarts : rules.prefixMinStarts,
    rules,
  );
}

/**
 * The unconverted starts a subject takes before it is held: the normal minimum, or, while its
 * country is under attack, the lowest one for ranges and prefixes with no conversion in the window
 * or no history, and for callers without a record.
 */
export function minUnconvertedFor(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  rules: PumpingThresholds,
): number {
  if (kind === 'range' || kind === 'prefix') {
    const normal = kind === 'range' ? rules.rangeMinStarts : rules.prefixMinStarts;
    // Under attack one real verification does not vouch for a range or prefix: it must meet the prior.
    const trusted =
      counts.verified > 0 &&
      hasHistory(kind, counts) &&
      !belowPrior(counts.starts, counts.verified, counts.expected, 1);
    return underAttack && !trusted ? Math.min(normal, rules.underAttackMinStarts) : normal;
  }
  const normal = rules.callerMinStarts;
  return underAttack && !counts.known ? Math.min(normal, rules.underAttackMinStarts) : normal;
}

/**
 * The burst signature: a range or prefix with no history that took at least `freshRangeMinStarts`
 * (`freshPrefixMinStarts`) starts of new numbers from new callers in the window, unconverted. Real
 * users of a range nobody verified in arrive one at a time and convert; starts into many of its
 * numbers from many addresses are an attack's. One caller's starts, or one number's, are the normal
 * rule's and the per-number limits' business. A prefix's proofs here are its ranges verified in,
 * not its numbers: a farm's numbers verified in one range do not cover a burst into the others.
 */
export function freshBurst(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  rules: PumpingThresholds,
): boolean {
  if ((kind !== 'range' && kind !== 'prefix') || hasHistory(kind, counts)) return false;
  const min = kind === 'range' ? rules.freshRangeMinStarts : rules.freshPrefixMinStarts;
  const verified =
    kind === 'prefix' ? Math.min(counts.verified, counts.ranges ?? counts.verified) : counts.verified;
  return doesNotConvert({ ...counts, starts: counts.callers ?? 0, verified }, min, rules);
}

/** Which rule holds a subject, as `verification.fraud_suspected` names it. */
export type PumpingRule = 'unconverted' | 'fresh_burst' | 'slow_drip' | 'country_under_attack';

/** The rule that holds a subject (see holds), or undefined. */
export function ruleOf(
  kind: PumpingSubjectKind,
  counts: SubjectCounts,
  underAttack: boolean,
  rules: PumpingThresholds,
): PumpingRule | undefined {
  if (doesNotConvert(counts, minUnconvertedFor(kind, counts, false, rules), rules)) return 'unconverted';
  if (freshBurst(kind, counts, rules)) return 'fresh_burst';
  if (kind === 'prefix' && slowDrip(kind, counts, rules)) return 'slow_drip';
  if (underAttack && doesNotConvert(counts, minUnconvertedFor(kind, counts, true, rules), rules))
    return 'country_under_attack';
  return undefined;
}

/** Whether a subject's window shows conversions at or above `minConversion`. */
export function converting(counts: SubjectCounts, rules: Pick<PumpingThresholds, 'minConversion'>): boolean {
  return counts.verified > 0 && counts.verified >= rules.minConversion * counts.starts;
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
