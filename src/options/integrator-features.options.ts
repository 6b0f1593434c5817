/** The options of the host-facing features: test numbers, VerifiedPhoneGuard and the history. */
import type { TestNumberOutcome } from '../core/test-session.js';
import type { RateLimit } from './limits.options.js';

/** One reviewer or demo number (`testNumbers.numbers`). */
export interface TestNumber {
  /** E.164 (`+79990000001`), matched exactly: never a prefix or a range. */
  phoneNumber: string;
  /** The fixed code (4 to 8 digits). Required unless `outcome` is `verified`, `expired` or `failed`. */
  code?: string;
  /**
   * What the session does on its own at its first read after the start (a status poll, the
   * reconciler): `verified`, `expired`, `failed`, or `code_required` (an operator_id push falling
   * back to a code). None: it waits for its code like a real session.
   */
  outcome?: TestNumberOutcome;
}

/**
 * Reviewer and demo numbers (app-store review, demo accounts): the module plays their sessions
 * itself with a fixed code, never calls the paid API for them, and protection neither counts nor
 * bills them. Off by default. See docs/test-numbers.md.
 */
export interface TestNumbersOptions {
  numbers: TestNumber[];
  /** Values of `owner(req)` allowed to use them; another owner's start is a real number's (the API is asked). Default: anyone. */
  owners?: string[];
  /** Wrong codes one session takes before it fails (as the API's attempts). Default 3. */
  maxAttempts?: number;
  /** Wrong codes per starter of a test number (its owner, else its client network); past it the starter's checks fail. Default 10 per hour. */
  wrongCodesPerNumber?: RateLimit;
}

export interface ResolvedTestNumbers {
  numbers: { phoneNumber: string; code?: string; outcome?: TestNumberOutcome }[];
  /** undefined: anyone. */
  owners: string[] | undefined;
  maxAttempts: number;
  wrongCodesPerNumber: RateLimit;
}

/**
 * Where VerifiedPhoneGuard finds what a request carries on the host's own routes, and the lifetime of
 * the signed claim it hands out (`verifiedPhone`). See docs/verified-phone-guard.md.
 */
export interface VerifiedPhoneOptions {
  /** Header holding the `verification_id`. Default `x-verification-id`. */
  header?: string;
  /** Field of a JSON body holding the `verification_id`. Default `verification_id`. */
  bodyField?: string;
  /** Header holding a signed claim from an earlier verification (step-up checks). Default `x-verified-phone-claim`. */
  claimHeader?: string;
  /** How long a claim is accepted after it was issued, ms. Default 600,000 (10 minutes). */
  claimTtlMs?: number;
}

/** A change of an owner's number (`PhoneChange`). See docs/verified-phone-guard.md. */
export interface PhoneChangeOptions {
  /** Time from one change of an owner's number to the next it may make, ms. Default 86,400,000 (a day). */
  cooldownMs?: number;
  /**
   * Ask for a recent verification (or claim) of the owner's current number too, `purpose`
   * `change_phone` or `step_up`, beside the new number's. Default false.
   */
  confirmOld?: boolean;
}

/** The most entries `history.maxEntries` may keep of each kind (its option rule's bound; an erasure reads up to it). */
export const HISTORY_MAX_ENTRIES_BOUND = 10_000;

/** Per-number and per-owner history for support (`VerificationHistory.list`). See docs/history.md. */
export interface HistoryOptions {
  /** Days an entry is kept. Default 30. */
  retentionDays?: number;
  /** Entries kept per kind of entry (five kinds), per number and per owner (the oldest give way). Default 100. */
  maxEntries?: number;
}

/**
 * What the module expects to have been charged, per day, method and operator prefix, reconciled
 * with the API's usage and balance (`VerificationLedger`). See docs/operations.md.
 */
export interface LedgerOptions {
  /**
   * Money (RUB) the API's figure and the ledger may differ by before `verification.ledger_drift` is
   * emitted (0: any difference). Default 1.
   */
  tolerance?: number;
  /** Days a day's figures are kept. Default 35. */
  retentionDays?: number;
  /**
   * Method and prefix rows one day keeps; the rows of prefixes past it are summed under the
   * prefix `other` (numbers of many countries cannot grow a day without bound). Default 2,000.
   */
  maxRowsPerDay?: number;
}
