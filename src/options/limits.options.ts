/** The options of `limits`: rate limits, cooldown, coalescing, spend cap and the start hook, given and resolved. */
import type { KnownVerificationMethod } from '../core/verification-method.js';
import type { HostRequest } from './host-request.js';
import type { PumpingOptions, ResolvedPumping } from './pumping.options.js';

export interface RateLimit {
  /** Requests allowed per window. */
  points: number;
  /** Window length in ms. */
  windowMs: number;
}

export interface StartContext {
  phoneNumber: string;
  method: KnownVerificationMethod;
  ip: string | undefined;
  owner: string | undefined;
  request: HostRequest;
  /**
   * Set when the pumping defence would refuse this start (its range or caller does not convert, or
   * the spend cap's reserve is for known callers). Answer `{ allow: true, challengePassed: true }`
   * once the caller solved a challenge (a captcha) to let this one start through; a plain allow
   * leaves the refusal to the defence.
   */
  suspected?: { reason: string; range: string; country: string };
  /**
   * Set when this start is a switch of a journey already under way (`POST /{prefix}/switch`): the
   * method it leaves. A hook that asks for a challenge on a start may let a switch through (its
   * body carries only the journey's `verification_id` and the method).
   */
  switchedFrom?: KnownVerificationMethod;
}
/** Allow: nothing, `true` or `{ allow: true }`. Refuse: `{ allow: false, reason }` (the reason reaches the frontend) or `false`. */
export type BeforeStartResult =
  void | undefined | boolean | { allow: true; challengePassed?: boolean } | { allow: false; reason: string };

/**
 * What `assessStart` is told: the start's context, its purpose, and what the pumping defence suspects.
 * The host's own risk inputs (line type, operator, the date of the last SIM change) come from its own
 * lookup of `phoneNumber`, or from `request`.
 */
export interface StartAssessmentContext extends StartContext {
  /** What the verification is for (`purpose` on start; a switch keeps its journey's). */
  purpose?: string;
}

/**
 * `assessStart`'s answer. `allow` (with `challengePassed: true` once the caller passed the challenge a
 * `step_up` asked for: a pumping hold is lifted too); `grade`: only methods charged on proof are offered
 * (409 `method_held`, as the pumping defence grades; `auto` takes the first); `step_up`: 403
 * `step_up_required` with `reason` and `challenge` (the host's captcha, a proof of presence);
 * `refuse`: 403 `start_refused`. A `reason` is a short code (`[A-Za-z0-9_.:-]`, at most 64, no run of
 * 7 digits): it reaches the frontend, events, history and spans; anything else reads `unspecified`.
 */
export type StartAssessment =
  | { decision: 'allow'; reason?: string; challengePassed?: boolean }
  | { decision: 'grade'; reason: string }
  | { decision: 'step_up'; reason: string; challenge?: string }
  | { decision: 'refuse'; reason: string };

export interface LimitsOptions {
  /**
   * `false` switches every protection off (not recommended): limits, cooldown, spend cap and, unless
   * `coalesceStarts: true` is given, coalescing. A `beforeStart` hook still runs. Default true.
   */
  enabled?: boolean;
  /** Default 10 per hour per client key. `false` switches it off. */
  startPerIp?: RateLimit | false;
  /**
   * Default 120 per 10 minutes: starts of a method charged on proof (reverse flash call, the bot) per
   * client key, per network and per owner, each. They cost nothing unless proved, but each is an
   * upstream call: the account's API rate is everyone's. `false` switches it off.
   */
  freeStartPerCaller?: RateLimit | false;
  /**
   * Default 15 per hour per phone number from all callers together: the ceiling above
   * `startPerPhoneAndCaller`, so that other callers cannot use up one caller's budget.
   */
  startPerPhone?: RateLimit | false;
  /** Default 5 per hour per phone number and caller (the owner when `owner()` answers, else the client key). */
  startPerPhoneAndCaller?: RateLimit | false;
  /** Default 60 s between one caller's starts to the same phone (other callers are not held back). */
  resendCooldownMs?: number | false;
  /** Default 30 per 10 minutes per client key. */
  checkPerIp?: RateLimit | false;
  /**
   * Default 10 per hour per phone number: wrong codes (as the API answered them) across all its
   * sessions; past it, checks and starts for the number answer 429 `too_many_wrong_codes`.
   */
  wrongCodesPerPhone?: RateLimit | false;
  /** Default 10 per hour per owner (when `owner()` answers), across numbers; same refusal. */
  wrongCodesPerOwner?: RateLimit | false;
  /**
   * Coalesce duplicate starts of the same caller (owner, else client key) + phone + method: within the
   * resend cooldown (or, with the cooldown off, while the session is pending) the first start's session
   * is handed back instead of a new paid one. Default true (false when `enabled: false`).
   */
  coalesceStarts?: boolean;
  /**
   * Spend cap: at most `amount` (major units, e.g. RUB) per `windowMs`, counted from each
   * initiation's `cost` (an estimate from the price list is reserved first; while no price is known,
   * `worstCasePrice`, default 3 RUB, the highest price the API documents). Windows are aligned on the
   * epoch shifted by `utcOffsetMinutes` (default 0: a 24 h window is a UTC day; 180: a day from
   * midnight in Moscow). Past it, starts answer 503 and `verification.spend_cap_reached` is emitted
   * once per window. Default `{ amount: 1000, windowMs: 86_400_000 }` (1,000 RUB a UTC day); raise it
   * to your traffic, or `false` to switch it off.
   */
  spendCap?: SpendCapOptions | false;
  /**
   * Pumping defence: starts and verifications per number range, country and caller; a range or caller
   * whose starts do not complete is held (429 `range_held`, `owner_held`, `client_held`), and near the
   * spend cap unknown starts wait (503 `service_unavailable`, `reason: "spend_cap_reserve"`). Default on (`mode: 'enforce'`); `false`
   * or `{ mode: 'off' }` switches it off, `{ mode: 'monitor' }` only reports. See README.
   */
  pumping?: PumpingOptions | false;
  /** How the per-client key is derived. Default: the client IP (trust-proxy aware), IPv6 by network prefix. */
  key?(req: HostRequest): string | undefined;
  /**
   * Length of the IPv6 prefix that is one client for the default key (one subscriber holds a whole
   * /64). IPv4-mapped IPv6 counts as the IPv4 address. Default 64; from 32 to 128.
   */
  ipv6PrefixLength?: number;
  /**
   * Host rule or captcha, run after validation, the allowlists and coalescing, before anything is counted
   * or spent. `{ allow: false, reason }` → 403 `start_refused` with that reason; a throw → 503.
   */
  beforeStart?: (context: StartContext) => BeforeStartResult | Promise<BeforeStartResult>;
  /**
   * The host's risk check of a start, run where `beforeStart` runs (before it): allow, grade, ask for
   * a step-up or refuse (StartAssessment). Its answer and reason go to the session's events, the
   * history and the span. A throw or an answer of another shape fails closed: 503
   * `service_unavailable`, `reason: "assess_start_failed"` (only the error's name is logged).
   */
  assessStart?: (context: StartAssessmentContext) => StartAssessment | Promise<StartAssessment>;
}

export interface SpendCapOptions {
  /** Most spent per window, major units (RUB). */
  amount: number;
  /** Window length, ms. */
  windowMs: number;
  /** Currency of `amount` and `worstCasePrice`. Default `RUB`. */
  currency?: string;
  /** Offset of the windows' alignment from UTC, minutes. Default 0. */
  utcOffsetMinutes?: number;
  /**
   * Reserved for a start whose method has no known price (the price list could not be read yet, or
   * lacks the method), until the real `cost` replaces it. Default 3 (RUB: the highest price the API
   * documents, `sms`).
   */
  worstCasePrice?: number;
}

export interface ResolvedLimits {
  enabled: boolean;
  startPerIp: RateLimit | false;
  freeStartPerCaller: RateLimit | false;
  startPerPhone: RateLimit | false;
  startPerPhoneAndCaller: RateLimit | false;
  resendCooldownMs: number | false;
  checkPerIp: RateLimit | false;
  wrongCodesPerPhone: RateLimit | false;
  wrongCodesPerOwner: RateLimit | false;
  coalesceStarts: boolean;
  spendCap: Required<SpendCapOptions> | false;
  /**
   * What a start of a method with no known price is expected to cost, minor units (kopecks): the spend
   * cap's `worstCasePrice`, else its default, also with the cap off (the orchestration's price order).
   */
  worstCaseMinor: number;
  pumping: ResolvedPumping;
  key?: LimitsOptions['key'];
  ipv6PrefixLength: number;
  beforeStart?: LimitsOptions['beforeStart'];
  assessStart?: LimitsOptions['assessStart'];
}
