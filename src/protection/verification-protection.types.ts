import type { KnownVerificationMethod, Money } from '../api/api.types.js';

/** One start as protection sees it (after validation, normalisation and the allowlists). */
export interface StartAttempt {
  /** E.164. */
  phoneNumber: string;
  method: KnownVerificationMethod;
  owner: string | undefined;
  /** Rate-limit key of the caller: `limits.key(req)` or the client IP. */
  clientKey: string | undefined;
  ip: string | undefined;
  /**
   * The browser's own key (the module's cookie, or a host's per-browser id). Without an owner, a
   * pending session is handed back only to the same browser key, never to the same IP.
   */
  browserKey?: string;
  request: unknown;
  /** A journey's switch: the method it leaves (told to `beforeStart`). */
  switchedFrom?: KnownVerificationMethod;
  /**
   * The methods the account offers this start, in the policy's order: those charged on proof are
   * what a suspected start is offered instead (graded answers). None given: nothing to grade to.
   */
  offered?: readonly KnownVerificationMethod[];
}

/** What protection needs to know of a session the start created. */
export interface StartedSession {
  requestId: string;
  /** ms since the epoch. */
  expiresAt: number;
  cost?: Money;
}

export interface ProtectedStart<T> {
  result: T;
  /** True when a pending session of the same caller + phone + method was handed back instead. */
  coalesced: boolean;
  /** When this caller's next start to this phone will be accepted (resend cooldown), or null. */
  resendAvailableAt: Date | null;
}
