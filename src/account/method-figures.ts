import { getCountryCallingCode, isSupportedCountry, parsePhoneNumberFromString } from 'libphonenumber-js/max';
import { DAY_MS } from '../core/clock.js';
import { bucketIndex, medianFromBuckets } from '../core/duration-histogram.js';
import { informsFallbackMoment } from '../core/fallback-moment.js';
import type { DeviceHint } from '../core/journey.js';
import { toMajorUnits, toMinorUnits, type Money } from '../core/money.js';
import { nationalDestinationCode } from '../core/operator-prefix.js';
import type { SessionRecord } from '../core/session-record.js';
import {
  methodTraits,
  VERIFICATION_METHODS,
  type MethodBilling,
  type VerificationMethod,
} from '../core/verification-method.js';
import { isTerminal } from '../core/verification-status.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';

/*
 * The method figures' model: what they count and answer, and the pure rules for their keys (method,
 * calling code, day, bucket) and windows. MethodStats keeps them in the store.
 */

/** What happens to a session, each counted once per session. */
export const METHOD_TRANSITIONS = ['started', 'delivered', 'verified', 'expired', 'failed'] as const;
export type MethodTransition = (typeof METHOD_TRANSITIONS)[number];

/** How many days of figures the store keeps (the counters' TTL), and so the longest window. */
export const STATS_RETENTION_DAYS = 35;
/** The window `methodStats()` sums over when not told. */
export const DEFAULT_STATS_WINDOW_DAYS = 30;

/** One method's figures over a window. Money in the account's currency. */
export interface MethodFigures {
  started: number;
  /** The code or call went out (the API showed `delivered`, or a code method was verified). */
  delivered: number;
  verified: number;
  expired: number;
  failed: number;
  /**
   * Distinct callers (owners, else client keys) the starts came from, summed over the days. Counted
   * only for starts that are counted (not suspected by the pumping defence; a number's first of the day).
   */
  callers: number;
  /** verified ÷ started (sessions still pending count as not verified yet); null when none started. */
  verifiedRate: number | null;
  /** Estimated from a histogram of fixed buckets (5 s … 10 min); null when none was verified. */
  medianTimeToVerifyMs: number | null;
  /** Money the API debited by the method's billing rule (at initiation, on delivery or when verified). */
  charged: Money;
  /** charged ÷ verified; null when none was verified. */
  costPerVerified: Money | null;
}

/**
 * Figures by method, for the methods that started a session in the window. A method this version
 * does not know is counted under `other`.
 */
export type MethodStatsReport = Partial<Record<VerificationMethod, MethodFigures>>;

export interface MethodStatsQuery {
  /** Days summed, today (UTC, on the module clock) included: 1 to 35, default 30. */
  days?: number;
  /**
   * Only numbers of one country: a calling code (`"7"`, `"+7"`), an ISO 3166 code (`"RU"`: its
   * calling code, so RU and KZ read the same +7 figures), or `"unknown"` (numbers without one).
   */
  country?: string;
}

export const UNKNOWN_COUNTRY = 'unknown';
export const OTHER_METHOD = 'other';

/** The transitions a record's state shows, in the order they happened. */
export function shownTransitions(record: SessionRecord): MethodTransition[] {
  const shown: MethodTransition[] = ['started'];
  if (record.delivered === true) shown.push('delivered');
  if (isTerminal(record.status)) shown.push(record.status);
  return shown;
}

/** Known methods under their name; any other under `other` (the keys stay few whatever the API sends). */
export function storedMethod(method: VerificationMethod): string {
  return (VERIFICATION_METHODS as readonly string[]).includes(method) ? method : OTHER_METHOD;
}

/**
 * Calling codes found so far, by a number's `+` and first three digits: calling codes are a prefix
 * code of one to three digits, so those decide it, and a number is parsed once per prefix, not once
 * per count (at most 1,000 entries).
 */
const callingCodeByPrefix = new Map<string, string>();

/** The calling code of an E.164 number (`7` for +7 912 …), or `unknown`. */
export function callingCodeOf(phoneNumber: string): string {
  const prefix = phoneNumber.slice(0, 4);
  const known = callingCodeByPrefix.get(prefix);
  if (known !== undefined) return known;
  let code: string | undefined;
  try {
    code = parsePhoneNumberFromString(phoneNumber)?.countryCallingCode;
  } catch {
    code = undefined;
  }
  if (code === undefined) return UNKNOWN_COUNTRY;
  if (/^\+\d{3}$/.test(prefix)) callingCodeByPrefix.set(prefix, code);
  return code;
}

export function countryKey(country: string): string {
  if (country === UNKNOWN_COUNTRY) return UNKNOWN_COUNTRY;
  const digits = /^\+?([1-9]\d{0,2})$/.exec(country);
  if (digits) return digits[1]!;
  const iso = country.toUpperCase();
  if (/^[A-Z]{2}$/.test(iso) && isSupportedCountry(iso)) return getCountryCallingCode(iso);
  throw new ArgumentRangeError(
    `methodStats: "country" must be a calling code ("7", "+7"), an ISO 3166 code ("RU") or "unknown", got ${JSON.stringify(country)}`,
  );
}

export function windowDays(days: number | undefined): number {
  if (days === undefined) return DEFAULT_STATS_WINDOW_DAYS;
  if (!Number.isSafeInteger(days) || days < 1 || days > STATS_RETENTION_DAYS)
    throw new ArgumentRangeError(
      `methodStats: "days" must be an integer from 1 to ${STATS_RETENTION_DAYS}, got ${days}`,
    );
  return days;
}

/** The last day named: most counts of a day fall on that day. */
let lastDay = { index: NaN, name: '' };

/**
 * Store key of a number's first counted session of a method on a day (`of`: the number's keyed digest),
 * the day by its number (8 B a key less than its date). With `older`, also the key as an older version
 * named it (its date): an erasure removes both.
 */
export function statsNumberKey(
  record: { createdAt: number; method: VerificationMethod },
  of: string,
  older?: 'older',
): string {
  const day = older === undefined ? Math.floor(record.createdAt / DAY_MS) : dayName(record.createdAt);
  return `stats-number:{${day}:${storedMethod(record.method)}:${of}}`;
}

/** The UTC day of a time, as `YYYY-MM-DD`. */
export function dayName(ms: number): string {
  const index = Math.floor(ms / DAY_MS);
  if (index !== lastDay.index) lastDay = { index, name: new Date(index * DAY_MS).toISOString().slice(0, 10) };
  return lastDay.name;
}

export const BUCKET_FIELD = 'ttv';
export function bucketField(index: number): string {
  return `${BUCKET_FIELD}${index}`;
}

export const CHARGED_FIELD = 'charged';
export const CALLERS_FIELD = 'callers';
/** The fallback moment's figures: sessions that ended unverified because another step of their journey was verified. */
export const LEFT_FIELD = 'left';
/** Unverified ends without evidence of a real user (FigureEvidence): left out of what the policy learns. */
export const UNPROVEN_FIELD = 'unproven';
/**
 * Unverified ends whose journey another step verified: a real user the method failed (the health's
 * evidence of a failure: a start nobody completes, or a giver's own abandoned calls, are not).
 */
export const RESCUED_FIELD = 'rescued';

/** The transition at which a billing rule debits the cost. */
const CHARGED_AT: Readonly<Record<MethodBilling, MethodTransition>> = {
  on_initiation: 'started',
  on_delivery: 'delivered',
  on_verified: 'verified',
};

/**
 * The figures the fallback moment is learned from: a calling code's, per device hint (a desktop
 * user dials a reverse call by hand, a mobile user taps it: two populations), `unhinted` for starts
 * without one. Kept beside the country's figures as a country key no query can name.
 */
export function momentGroup(callingCode: string, device: DeviceHint | undefined): string {
  return `${callingCode}~${device ?? 'unhinted'}`;
}

/** The level of a figure cell: an operator prefix, a calling code, every number. */
export type CellLevel = 'operator' | 'country' | 'all';
export const CELL_LEVELS: readonly CellLevel[] = ['operator', 'country', 'all'];

/**
 * The cells a session's figures also go to, narrowest first (operator prefix × device, the calling
 * code × device, every number × device), then the operator prefix and the calling code over every
 * device (their health: healthCells): `7~985.mobile`, `7~.mobile`, `all~.mobile`, `7~985`, `7~*`. Kept
 * beside the country's figures as country keys no query can name (`stats:<day>:<method>:<cc>~<cell>:<field>`),
 * per day, never per session. A network adds a bounded share to each (FigureEvidence).
 */
export function figureCells(phoneNumber: string, device: DeviceHint | undefined): string[] {
  const hint = device ?? 'unhinted';
  const [operator, country] = healthCells(phoneNumber);
  return [`${operator}.${hint}`, `${callingCodeOf(phoneNumber)}~.${hint}`, `all~.${hint}`, operator, country];
}

/**
 * The cells the first method is chosen from (operator prefix, calling code, every number; × device):
 * a session started while its method was degraded or demoted there is left out of them (and of the
 * moment), kept in its health cells: an outage's failures are not the method's normal figures.
 */
export function choiceCells(phoneNumber: string, device: DeviceHint | undefined): string[] {
  return figureCells(phoneNumber, device).slice(0, CELL_LEVELS.length);
}

/** A method's health cells: its operator prefix's and calling code's, over every device (`7~985`, `7~*`). */
export function healthCells(phoneNumber: string): [operator: string, country: string] {
  const country = callingCodeOf(phoneNumber);
  return [`${country}~${nationalDestinationCode(phoneNumber)}`, `${country}~*`];
}

/** How an admission names a health cell its network's share left the session out of (FigureEvidence): `h:7~*`. */
export const HEALTH_OUT = 'h:';

/**
 * Leaves out of `counts` the cells its network's share left the session out of (FigureEvidence), and the moment
 * with its calling code × device cell, or when its moment group is named (`7~*` in an older release's decision).
 */
export function leaveOutOfShares(
  counts: Counts,
  phoneNumber: string,
  device: DeviceHint | null,
  outOfCells: readonly string[],
): void {
  if (outOfCells.length === 0) return;
  counts.cells = counts.cells.filter((c) => !outOfCells.includes(c) && !outOfCells.includes(HEALTH_OUT + c));
  const [, byDevice, , , country] = figureCells(phoneNumber, device ?? undefined);
  const marks = [momentGroup(callingCodeOf(phoneNumber), device ?? undefined), byDevice!, country!];
  if (!marks.some((mark) => outOfCells.includes(mark))) return;
  delete counts.momentGroup;
  delete counts.momentAdds;
}

/** The fields a figure cell counts: what a start became, and its time to verify (no money, no callers). */
export function isCellField(field: string): boolean {
  return field !== CHARGED_FIELD && field !== CALLERS_FIELD && field !== LEFT_FIELD;
}

/** What counting some transitions of one session adds, and where. */
export interface Counts {
  method: string;
  country: string;
  /** The figure cells (figureCells) the counts also go to (the fields isCellField keeps). */
  cells: string[];
  /** Where the counts also go for the fallback moment (momentGroup), when the session informs it. */
  momentGroup?: string;
  /** What goes there instead of `adds` (a session whose journey another step verified). */
  momentAdds?: [field: string, by: number][];
  day: string;
  transitions: MethodTransition[];
  adds: [field: string, by: number][];
  /** The cost, when one of the transitions is the moment its billing rule charges it. */
  charged?: Money;
  timeToVerifyMs?: number;
}

/**
 * What counting `transitions` of the record adds: each transition, the charge, the time to verify
 * (to `now` if the record has no verifiedAt). `device` is the start's hint (null: none given).
 */
export function countsOf(
  record: SessionRecord,
  transitions: MethodTransition[],
  now: number,
  device: DeviceHint | null,
): Counts {
  const country = callingCodeOf(record.phoneNumber);
  const counts: Counts = {
    method: storedMethod(record.method),
    country,
    cells: figureCells(record.phoneNumber, device ?? undefined),
    ...(informsFallbackMoment(record.method, record.requestId)
      ? { momentGroup: momentGroup(country, device ?? undefined) }
      : {}),
    day: dayName(record.createdAt),
    transitions,
    adds: transitions.map((transition) => [transition, 1]),
  };
  const minor = record.cost ? toMinorUnits(record.cost.amount) : undefined;
  if (transitions.includes(CHARGED_AT[methodTraits(record.method).billing]) && minor !== undefined) {
    counts.charged = record.cost;
    if (minor > 0) counts.adds.push([CHARGED_FIELD, minor]);
  }
  if (transitions.includes('verified')) {
    counts.timeToVerifyMs = Math.max((record.verifiedAt ?? now) - record.createdAt, 0);
    counts.adds.push([bucketField(bucketIndex(counts.timeToVerifyMs)), 1]);
  }
  return counts;
}

/** One method's counters summed over days. */
export interface Sums {
  started: number;
  delivered: number;
  verified: number;
  expired: number;
  failed: number;
  chargedMinor: number;
  callers: number;
  /** Moment figures only: see LEFT_FIELD. */
  left: number;
  /** See UNPROVEN_FIELD. */
  unproven: number;
  /** See RESCUED_FIELD. */
  rescued: number;
  buckets: number[];
}

/** Sums of nothing: every counter 0, no bucket. */
export function emptySums(): Sums {
  return {
    started: 0,
    delivered: 0,
    verified: 0,
    expired: 0,
    failed: 0,
    chargedMinor: 0,
    callers: 0,
    left: 0,
    unproven: 0,
    rescued: 0,
    buckets: [],
  };
}

export function toFigures(sums: Sums, currency: string): MethodFigures {
  return {
    started: sums.started,
    delivered: sums.delivered,
    verified: sums.verified,
    expired: sums.expired,
    failed: sums.failed,
    callers: sums.callers,
    verifiedRate: sums.started > 0 ? sums.verified / sums.started : null,
    medianTimeToVerifyMs: medianFromBuckets(sums.buckets),
    charged: { amount: toMajorUnits(sums.chargedMinor), currency },
    costPerVerified:
      sums.verified > 0
        ? { amount: toMajorUnits(Math.round(sums.chargedMinor / sums.verified)), currency }
        : null,
  };
}
