import type { KnownVerificationMethod, Money } from '../api/api.types.js';

/**
 * Who asks protection for a start, and of what (after validation, normalisation and the
 * allowlists): what its rules count and key by, nothing of the API's request.
 */
export interface StartCandidate {
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
  /** The host's request, for its `beforeStart` hook. */
  request: unknown;
  /** What the start is for (`purpose`; a switch keeps its journey's): its policy's limits apply. */
  purpose?: string;
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

/**
 * Protection's answer to a start it does not refuse: the caller's identical pending session to hand
 * back (coalescing), or a permit to pay for a new one (see StartPermit).
 */
export interface HandBack {
  /** The pending session's request id: the caller checks it is still pending (else admits again, naming it stale). */
  handBack: string;
  /** When this caller's next start to this phone will be accepted (resend cooldown), or null. */
  resendAvailableAt: Date | null;
}
