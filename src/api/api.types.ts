/**
 * camelCase types of the verification API (snake_case exists only on the wire, in api.wire.ts).
 * Unknown methods and statuses from the wire pass through as plain strings, typed as such.
 */

export {
  VERIFICATION_METHODS,
  type KnownVerificationMethod,
  type VerificationMethod,
} from '../core/verification-method.js';
export {
  VERIFICATION_STATUSES,
  TERMINAL_STATUSES,
  type KnownVerificationStatus,
  type VerificationStatus,
} from '../core/verification-status.js';
export type { Money } from '../core/money.js';
import type { VerificationMethod } from '../core/verification-method.js';
import type { VerificationStatus } from '../core/verification-status.js';
import type { Money } from '../core/money.js';

export interface InitiateRequest {
  /** E.164. */
  phoneNumber: string;
  method: VerificationMethod;
  /** Session TTL in seconds; upstream default 300, maximum 600. */
  expirySeconds?: number;
}

/** What every initiation result carries, whatever the method. */
export interface InitiateResultBase {
  requestId: string;
  /** The number the API names, E.164; `''` when the answer leaves it out (only `method` is required). */
  phoneNumber: string;
  status: VerificationStatus;
  /** Price fixed at initiation. Optional on the wire ("required marking: not shown"). */
  cost?: Money;
  expiresAt?: Date;
  /** Number of digits the user will enter, when the method uses a code. */
  codeLength?: number;
}
export interface ReverseFlashCallInitiated extends InitiateResultBase {
  method: 'reverse_flash_call';
  numberToCall?: string;
}
export interface Msgr2BotInitiated extends InitiateResultBase {
  method: 'msgr2_bot';
  deepLink?: string;
}
export interface OperatorIdInitiated extends InitiateResultBase {
  method: 'operator_id';
  awaitingCode?: boolean;
}
export interface CodeMethodInitiated extends InitiateResultBase {
  method: 'flash_call' | 'sms' | 'msgr1_otp' | 'voice';
}
export interface UnknownMethodInitiated extends InitiateResultBase {
  method: string & { readonly __unknownMethod?: never };
  /** The whole wire object, for fields this version does not know. */
  raw: Record<string, unknown>;
}
/** The variants of the methods this version knows (narrows on `method` with a plain switch). */
export type KnownInitiateResult =
  ReverseFlashCallInitiated | Msgr2BotInitiated | OperatorIdInitiated | CodeMethodInitiated;
/**
 * Discriminated on `method`. `UnknownMethodInitiated.method` is any string, so comparing `method` alone
 * does not exclude it: narrow with `isKnownInitiateResult` first (or test `'raw' in result`).
 */
export type InitiateResult =
  | ReverseFlashCallInitiated
  | Msgr2BotInitiated
  | OperatorIdInitiated
  | CodeMethodInitiated
  | UnknownMethodInitiated;

/** `GET /v1/verify/{request_id}`: the source of truth. */
export interface VerificationSession {
  requestId: string;
  phoneNumber: string;
  method: VerificationMethod;
  status: VerificationStatus;
  cost?: Money;
  createdAt?: Date;
  verifiedAt: Date | null;
  expiresAt?: Date;
  awaitingCode?: boolean;
}

export interface CheckRequest {
  requestId: string;
  /** 4 to 8 digits. */
  code: string;
}
export interface CheckResult {
  requestId: string;
  status: VerificationStatus;
  phoneNumber: string;
}

export interface Balance {
  balance: Money;
}

export interface UsageQuery {
  /** Inclusive start date, `YYYY-MM-DD` or a Date (its UTC date is used). */
  from?: string | Date;
  /** Inclusive end date. */
  to?: string | Date;
}
export interface UsageDay {
  date: string;
  total: number;
  verified: number;
}
export interface UsageSummary {
  from: string;
  to: string;
  totalVerifications: number;
  successful: number;
  successRate: number;
  totalCost: Money;
  /** Keyed by canonical method names (`msgr1` on the wire becomes `msgr1_otp`). */
  byMethod: Record<string, number>;
  byStatus: Record<string, number>;
  daily: UsageDay[];
}

export interface MethodPrice {
  method: VerificationMethod;
  price: Money;
}
/** `GET /v1/prices` (shape "not shown": the client accepts a list or a map, see ARCHITECTURE.md). */
export interface Prices {
  prices: MethodPrice[];
}
