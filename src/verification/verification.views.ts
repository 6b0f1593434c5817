import type { KnownVerificationMethod, VerificationMethod, VerificationStatus } from '../api/api.types.js';
import type { DeviceHint } from '../core/journey.js';
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
  /**
   * Once the journey has more than one step: its steps sealed for the frontend, to send back as
   * `journey_token` with every later call, so that a deployment whose store lost the journey (a
   * restart on the default MemoryStore) still follows its current step. The browser client does it.
   */
  journeyToken?: string;
}

export interface CheckView {
  verificationId: string;
  status: VerificationStatus;
  verified: boolean;
}

/** What VerifiedPhoneGuard decides on (`StatusFlow.verifiedFacts`). */
export interface VerifiedFacts {
  status: VerificationStatus | 'canceled';
  /** The verified step's number (status `verified`), else null. */
  phoneNumber: string | null;
  /** When the module first knew it verified (the API's `verified_at`, else first seen); null: unknown. */
  verifiedAt: Date | null;
  /** A reviewer or demo number's session (`testNumbers`). */
  test: boolean;
  /** What it was started for (`purpose` on start); undefined: none named. */
  purpose?: string;
}

export interface StatusView {
  verificationId: string;
  method: VerificationMethod;
  /** The journey's status: its answering session's, or `canceled`. */
  status: VerificationStatus | 'canceled';
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
  /** The methods the journey tried, in order (the current one last). */
  methodsTried: VerificationMethod[];
  /** The methods a switch may go to now, in the policy's order (empty once the journey is over). */
  switchMethods: KnownVerificationMethod[];
  /** When the frontend may offer another method (absent when none is left, or the journey is over). */
  fallbackAvailableAt?: Date;
  /**
   * Once the journey has more than one step: its steps sealed for the frontend, to send back as
   * `journey_token` with every later call, so that a deployment whose store lost the journey (a
   * restart on the default MemoryStore) still follows its current step. The browser client does it.
   */
  journeyToken?: string;
}

export interface MethodView {
  method: KnownVerificationMethod;
  /** Whether the user types a code (operator_id: only after the SMS fallback). */
  codeEntry: CodeEntry;
  pollIntervalMs: number;
}

export interface StartInput {
  phoneNumber: string;
  /** A method `GET /methods` offers, or `auto` (or nothing): the orchestration policy picks it. */
  method?: string;
  /** `mobile` or `desktop`: the policy leaves out the methods `orchestration.exclude` names for it. */
  device?: DeviceHint | (string & { readonly __unknownDevice?: never });
  /**
   * What the verification is for: `signup`, `login`, `step_up`, `change_phone` or one declared in
   * `purposes`. It picks the purpose's policy and is carried in the events, history, claims and spans.
   */
  purpose?: string;
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
  /** The `journey_token` the frontend was given last (see StatusView.journeyToken), if any. */
  journeyToken?: string;
}

/** A journey's move to another method (`POST /{prefix}/switch`). */
export interface SwitchInput {
  verificationId: string;
  /** A method the journey may switch to (`switchMethods`), or `auto` (or nothing): the policy's next. */
  method?: string;
  owner?: string;
  ip?: string;
  /** As in StartInput: who started, for the cooldown's exact timing. */
  browserKey?: string;
  request?: unknown;
  /** The `journey_token` the frontend was given last (see StatusView.journeyToken), if any. */
  journeyToken?: string;
}

/** The end of a journey (`POST /{prefix}/cancel`). */
export interface CancelInput {
  verificationId: string;
  owner?: string;
  /** For the per-client limit a cancel counts against (`limits.checkPerIp`). */
  ip?: string;
  request?: unknown;
  /** The `journey_token` the frontend was given last (see StatusView.journeyToken), if any. */
  journeyToken?: string;
}

/** What a cancel gives back: the journey is over for its frontend. */
export interface CancelView {
  verificationId: string;
  status: 'canceled';
}
