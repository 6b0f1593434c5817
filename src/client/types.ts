import type { VerificationClientError } from './errors.js';

/** The start route's answer (201). */
export interface StartAnswer extends StatusAnswer {
  resend_available_at: string | null;
  resumed: boolean;
}

/** The status route's answer (200), also each `status` event of the status stream. */
export interface StatusAnswer {
  verification_id: string;
  method: string;
  status: string;
  phone_number: string;
  expires_at: string;
  verified_at?: string | null;
  awaiting_code: boolean;
  poll_interval_ms: number;
  code_length?: number;
  code_length_min?: number;
  code_length_max?: number;
  number_to_call?: string;
  deep_link?: string;
  /** The journey's methods so far, oldest first (a server without journeys: absent). */
  methods_tried?: string[];
  /** Methods `POST /switch` may move to now. */
  switch_methods?: string[];
  /** From when "try another way" should be offered; absent when there is nothing to switch to. */
  fallback_available_at?: string | null;
  /** After a switch: sent back with every later call (a server that lost the journey follows it by this). */
  journey_token?: string;
}

/** The cancel route's answer (200). */
export interface CancelAnswer {
  verification_id: string;
  status: 'canceled';
}

/** The check route's answer (200). */
export interface CheckAnswer {
  verification_id: string;
  status: string;
  verified: boolean;
}

export type VerificationPhase =
  'idle' | 'starting' | 'awaiting_user' | 'verifying' | 'verified' | 'failed' | 'expired' | 'canceled';

/** What the user does now, while `awaiting_user`. */
export type UserPrompt =
  /** Type a code of `minLength` to `maxLength` digits (`length` when the API gives it exactly). */
  | { kind: 'code'; length: number | null; minLength: number; maxLength: number }
  /** Call `numberToCall` from the phone being verified (reverse flash call). */
  | { kind: 'call'; numberToCall: string; telHref: string }
  /** Open `deepLink` (a link, or a QR code of it on a computer), e.g. a messenger bot. */
  | { kind: 'link'; deepLink: string }
  /** Nothing to type: approve the operator's prompt on the phone (operator_id). */
  | { kind: 'push' };

export interface VerificationState {
  phase: VerificationPhase;
  verificationId: string | null;
  method: string | null;
  /** The server's status (`sent`, `delivered`, `verified`, …). */
  status: string | null;
  /** E.164 after a start, masked after a resume. */
  phoneNumber: string | null;
  prompt: UserPrompt | null;
  attemptsRemaining: number | null;
  /** The start answered an identical pending start (nothing new was sent), or a reload resumed it. */
  resumed: boolean;
  /** Server-clock instants (ms since the epoch) and the time left until them. */
  expiresAt: number | null;
  expiresInMs: number | null;
  resendAvailableAt: number | null;
  resendInMs: number | null;
  canResend: boolean;
  /** The journey's methods so far, oldest first. */
  methodsTried: string[];
  /** What `switchMethod()` may move to (the server's `switch_methods`). */
  switchMethods: string[];
  /** When "try another way" should be offered (server clock), and the time left until then. */
  fallbackAvailableAt: number | null;
  fallbackInMs: number | null;
  /**
   * The moment to offer "try another way": `fallbackAvailableAt` has passed (or the method failed or
   * expired) and there is a method to switch to. The server may accept an earlier switch.
   */
  canSwitch: boolean;
  /** The last refusal; `error.retryUntil` (server clock) with `retryInMs` for a wait. */
  error: VerificationClientError | null;
  retryInMs: number | null;
  /** How the status is followed: pushed over the stream, or polled. */
  connection: 'stream' | 'polling' | null;
}
