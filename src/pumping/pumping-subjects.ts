import { parsePhoneNumberFromString } from 'libphonenumber-js/max';
import type { VerificationMethod } from '../core/verification-method.js';
import { clientAddressKey } from '../core/client-address.js';
import { ArgumentTypeError } from '../core/phone-verification.error.js';
import { operatorPrefixOf } from '../core/operator-prefix.js';
import { numberRange } from './pumping-counts.js';
import type { PumpingSubjectKind } from './pumping-rules.js';
import type { StatsSubject } from './range-stats.js';
import { FINE, VOLUME } from './range-stats-keys.js';

/**
 * What a start is counted against, named as the store keys them: its number's range, operator
 * prefix and country, and its callers (owner, client key, IPv6 network). Pure.
 */

/** One start as the defence sees it. */
export interface PumpingAttempt {
  phoneNumber: string;
  owner: string | undefined;
  clientKey: string | undefined;
  ip: string | undefined;
  /** The method started: one charged on proof is free unless proved, and weighs as such (see PumpingDefence). */
  method?: VerificationMethod;
  /**
   * A journey's switch (the method it leaves): judged as part of its journey, not as a new start of
   * its caller. It costs money, so it counts for its number's range, prefix and country; its callers
   * were counted when the journey started.
   */
  switchedFrom?: string;
}

export interface Subject extends StatsSubject {
  kind: PumpingSubjectKind | 'country';
}

export type HoldableSubject = Subject & { kind: PumpingSubjectKind };

/** Where a number stands: its range, operator prefix and country. */
export interface NumberPlace {
  range: string;
  prefix: string;
  country: string;
}

/**
 * A number's range, operator prefix and ISO country (else its calling code: a number the
 * allowlists passed always has one).
 */
export function placeOf(e164: string, rangeDigits: number): NumberPlace {
  const range = numberRange(e164, rangeDigits);
  const parsed = parsePhoneNumberFromString(e164);
  const prefix = operatorPrefixOf(e164);
  if (!parsed) return { range, prefix, country: `+${e164.slice(1, 2)}` };
  return {
    range,
    prefix,
    country: parsed.country ?? `+${parsed.countryCallingCode}`,
  };
}

/** The subjects a start is counted for: its place's, then its callers' (an address that is the client key once). */
export function subjectsOf(attempt: PumpingAttempt, place: NumberPlace, ipv6PrefixLength: number): Subject[] {
  const subjects: Subject[] = [
    { kind: 'range', id: `range:${place.range}` },
    { kind: 'prefix', id: `prefix:${place.prefix}` },
    { kind: 'country', id: `country:${place.country}` },
  ];
  if (attempt.owner !== undefined) subjects.push({ kind: 'owner', id: `owner:${attempt.owner}` });
  if (attempt.clientKey !== undefined) subjects.push({ kind: 'client', id: `client:${attempt.clientKey}` });
  const network = attempt.ip === undefined ? undefined : clientAddressKey(attempt.ip, ipv6PrefixLength);
  if (network !== undefined && network !== attempt.clientKey)
    subjects.push({ kind: 'network', id: `network:${network}` });
  return subjects;
}

/**
 * Who a start came from, for the burst signature: the client key (the address's network when the
 * host's `limits.key` names none: a start with an address always has one), else the owner.
 */
export function callerOf(attempt: PumpingAttempt): string | undefined {
  if (attempt.clientKey !== undefined) return `client:${attempt.clientKey}`;
  return attempt.owner === undefined ? undefined : `owner:${attempt.owner}`;
}

export function isCaller(subject: Subject): boolean {
  return subject.kind === 'owner' || subject.kind === 'client' || subject.kind === 'network';
}

/** The subjects a hold can stand on: all but the country (judged as a whole, it is never held). */
export function holdableOf(subjects: Subject[]): HoldableSubject[] {
  const holdable: HoldableSubject[] = [];
  for (const s of subjects) if (s.kind !== 'country') holdable.push(s as HoldableSubject);
  return holdable;
}

export function countryId(subjects: Subject[]): string {
  for (const s of subjects) if (s.kind === 'country') return s.id;
  throw new ArgumentTypeError('a start is always counted for its country');
}

/** The country's twins (range-stats-keys.ts): bounded by its callers' shares, and its whole volume. */
export function twinsOf(subjects: Subject[]): StatsSubject[] {
  const country = countryId(subjects);
  return [{ id: country + FINE }, { id: country + VOLUME }];
}

/**
 * The ids a verification of `phoneNumber` names by itself (with its session's `owner`): its range's,
 * prefix's and country's, its owner's, its country's twins. A session's start credited these and its
 * callers' (client key, network), which only its start knew.
 */
export function ownIds(
  phoneNumber: string,
  owner: string | undefined,
  rangeDigits: number,
  ipv6PrefixLength: number,
): string[] {
  const attempt = { phoneNumber, owner, clientKey: undefined, ip: undefined };
  const subjects = subjectsOf(attempt, placeOf(phoneNumber, rangeDigits), ipv6PrefixLength);
  return [...subjects, ...twinsOf(subjects)].map((s) => s.id);
}
