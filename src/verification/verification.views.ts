import type { KnownVerificationMethod, VerificationMethod, VerificationStatus } from '../api/api.types.js';
import type { CodeEntry } from '../core/verification-method.js';

/** What a start gives back (camelCase; the client routes render it in snake_case). */
export interface StartView {
  /** Opaque handle for the frontend. */
  verificationId: string;
  method: VerificationMethod;
  status: VerificationStatus;
  /** The number the caller sent, in E.164. */
  phoneNumber: string;
  expiresAt: Date;
  pollIntervalMs: number;
  resendAvailableAt: Date | null;
  /** Exact digits of the code, when the API gave it. */
  codeLength?: number;
  /** While a code is awaited: the digits it may have (both `codeLength` when known, else the spec's 4 and 8). */
  codeLengthMin?: number;
  codeLengthMax?: number;
  numberToCall?: string;
  deepLink?: string;
  awaitingCode: boolean;
  /** True when an identical pending start was handed back instead of paying for a new one. */
  resumed: boolean;
}

export interface CheckView {
  verificationId: string;
  status: VerificationStatus;
  verified: boolean;
}

export interface StatusView {
  verificationId: string;
  method: VerificationMethod;
  status: VerificationStatus;
  /** Masked (`+7******4567`): the status route may be read by whoever holds the handle. */
  phoneNumberMasked: string;
  expiresAt: Date;
  verifiedAt: Date | null;
  awaitingCode: boolean;
  pollIntervalMs: number;
  codeLength?: number;
  /** As in StartView: set while a code is awaited. */
  codeLengthMin?: number;
  codeLengthMax?: number;
  numberToCall?: string;
  deepLink?: string;
}

export interface MethodView {
  method: KnownVerificationMethod;
  /** Whether the user types a code (operator_id: only after the SMS fallback). */
  codeEntry: CodeEntry;
  pollIntervalMs: number;
}

export interface StartInput {
  phoneNumber: string;
  method: string;
  owner?: string;
  /** Client IP as the HTTP platform reports it (trust-proxy aware). */
  ip?: string;
  /**
   * The browser's own key (the client routes use the module's `pv_browser` cookie). Without an
   * owner, an identical pending start is handed back only to the same browser key; without either,
   * it is never handed back.
   */
  browserKey?: string;
  /** The raw request, for `limits.key` and `beforeStart`. */
  request?: unknown;
}

export interface CheckInput {
  verificationId: string;
  code: string;
  owner?: string;
  ip?: string;
  request?: unknown;
}
