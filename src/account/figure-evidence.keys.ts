import { DAY_MS } from '../core/clock.js';
import { digest } from '../core/digest.js';
import type { SessionRecord } from '../core/session-record.js';
import { dayName, storedMethod } from './method-figures.js';

/*
 * Where the method figures' evidence lives in the store (FigureEvidence writes it; an erasure removes
 * a session's and a caller's): per session by its id, per caller and giver by a keyed digest and day.
 */

/** Who gives a start (FigureGivers' kinds). */
export type GiverKind = 'caller' | 'address' | 'network';

export function journeyVerifiedKey(record: SessionRecord): string {
  return `stats-journey-verified:{${record.journeyId ?? record.requestId}}`;
}

/** What the figures keep of one session by its id (its admission, a page following it): an erasure removes them. */
export function sessionEvidenceKeys(requestId: string): string[] {
  const keyed = [admittedKey, followedKey, earlierKey, (id: string) => journeyFollowedKey({ requestId: id })];
  return keyed.map((key) => key(requestId));
}

/** A later step of the journey (one charged whatever happens) had a page following it. */
export const journeyFollowedKey = (record: Pick<SessionRecord, 'requestId' | 'journeyId'>) =>
  `stats-journey-followed:{${record.journeyId ?? record.requestId}}`;
export const earlierKey = (requestId: string) => `stats-earlier:{${requestId}}`;

/**
 * How a session names itself in its number's day claim: 66 bits of its id's digest (its number's
 * sessions of one day and method are a handful; two alike by chance, 2^-66 a pair, is none).
 */
export function claimOf(requestId: string): string {
  return digest(requestId).slice(0, 11);
}

export function admittedKey(requestId: string): string {
  return `stats-admitted:{${requestId}}`;
}

export function followedKey(requestId: string): string {
  return `stats-followed:{${requestId}}`;
}

export function recordKey(callerDigest: string): string {
  return `stats-record:{${callerDigest}}`;
}

export type DayOfMethod = { createdAt: number; method: SessionRecord['method'] };

export function firstCallerKey(record: DayOfMethod, of: string): string {
  return `stats-caller:{${dayName(record.createdAt)}:${storedMethod(record.method)}:${of}}`;
}

/** A giver's day share, `{<day number>:<method>:<c|a|n>:<digest>}`: 16 B under a date and the kind's name. */
export function giverKey(record: DayOfMethod, kind: GiverKind, of: string): string {
  const letter = kind === 'caller' ? 'c' : kind === 'address' ? 'a' : 'n';
  return `stats-giver:{${Math.floor(record.createdAt / DAY_MS)}:${storedMethod(record.method)}:${letter}:${of}}`;
}

/** Store keys a caller's starts of a session's day and method left in the figures' evidence (erasure). */
export function callerEvidenceKeys(record: DayOfMethod, callerDigest: string): string[] {
  return [
    firstCallerKey(record, callerDigest),
    giverKey(record, 'caller', callerDigest),
    `stats-giver:{${dayName(record.createdAt)}:${storedMethod(record.method)}:caller:${callerDigest}}`,
    recordKey(callerDigest),
  ];
}
