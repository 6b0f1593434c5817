import type { Money } from './money.js';
import type { StartAssessmentFacts } from './session-record.js';
import type { VerificationMethod } from './verification-method.js';
import type { VerificationStatus } from './verification-status.js';

/** Names of the Nest events emitted through @nestjs/event-emitter (equal to the upstream event names). */
export const VerificationEventName = {
  verified: 'verification.verified',
  failed: 'verification.failed',
  expired: 'verification.expired',
  codeRequired: 'verification.code_required',
  /**
   * A journey verified by a second of its steps (the user finished a method it had switched away
   * from too): `verification.verified` went out for the first, at most once per journey, and this one
   * tells of the other step (its charge, its number) without granting anything twice.
   */
  verifiedAgain: 'verification.verified_again',
} as const;
export type VerificationEventType = (typeof VerificationEventName)[keyof typeof VerificationEventName];
/** Short names accepted by `@OnVerificationEvent(...)`. */
export type VerificationEventShortName =
  'verified' | 'failed' | 'expired' | 'code_required' | 'verified_again';

/** Operational events for the people who run the host app. */
export const VerificationOpsEventName = {
  balanceInsufficient: 'verification.balance_insufficient',
  balanceLow: 'verification.balance_low',
  spendCapReached: 'verification.spend_cap_reached',
  fraudSuspected: 'verification.fraud_suspected',
  ledgerDrift: 'verification.ledger_drift',
  methodHealth: 'verification.method_health',
  fallbackMoment: 'verification.fallback_moment',
} as const;

/** Where the module learned the outcome. */
export type VerificationEventSource = 'webhook' | 'poll' | 'check';

/** Payload of `verification.verified|failed|expired|code_required`. What the API says, not what a webhook claimed. */
export interface VerificationEvent {
  event: VerificationEventType;
  /**
   * The journey's `verification_id`, the very string its frontend holds (one per verification, across
   * its methods): group a journey's events by it, or match them to what your frontend sent.
   */
  verificationId: string;
  /** Upstream `request_id` (server-side only; frontends see an opaque `verification_id`). */
  requestId: string;
  /** E.164. */
  phoneNumber: string;
  method: VerificationMethod;
  status: VerificationStatus;
  verifiedAt: Date | null;
  expiresAt: Date | null;
  /** The `owner(req)` the session was started for, when an owner resolver is configured. */
  owner: string | undefined;
  /** What it was started for (`purpose` on start), when one was named. */
  purpose?: string;
  /**
   * The host's `limits.assessStart` answer for its start (`allow`, or `grade`: only methods charged on
   * proof were offered), its reason and whether a challenge was passed, when the hook is set.
   */
  assessment?: StartAssessmentFacts;
  source: VerificationEventSource;
  /**
   * The methods the session's journey tried, in order (the frontend's `verification_id` names the
   * journey; each method tried is one upstream session). `[method]` for a journey of one step.
   */
  methodsTried: VerificationMethod[];
  /**
   * Money charged for the journey's steps so far, by the API's billing rules (reverse flash call
   * once verified; SMS, flash call and the bot once delivered; the others at initiation), or null
   * when the API stated no price for any of them. Server-side only, like `cost`.
   */
  journeyCost: Money | null;
  /**
   * Present (true) only for a session of one of the host's `testNumbers`: played by the module,
   * never sent to the API, never billed. Hosts that act on real verifications may check it.
   */
  test?: true;
  /**
   * The `name` of the registration the session belongs to (`VerificationModule.forRoot({ name })`),
   * when the app has named registrations; absent for the unnamed one.
   */
  registration?: string;
}

/** Whether an event of the module's came from the registration `name` (undefined: the unnamed one). */
export function isEventOf(event: { registration?: string }, name: string | undefined): boolean {
  return event.registration === name;
}

export interface BalanceEvent {
  event: (typeof VerificationOpsEventName)['balanceInsufficient' | 'balanceLow'];
  /** Balance amount as last read (null when the API only answered 402). */
  amount: number | null;
  currency: string;
  threshold?: number;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

export interface SpendCapReachedEvent {
  event: (typeof VerificationOpsEventName)['spendCapReached'];
  /** Spent in the current window, in major units (RUB). */
  spent: number;
  cap: number;
  currency: string;
  windowMs: number;
  windowEndsAt: Date;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

/**
 * Payload of `verification.fraud_suspected`: the pumping defence started a hold (or, in monitor
 * mode, would have). Emitted once per hold across instances; alert on it.
 */
export interface FraudSuspectedEvent {
  event: (typeof VerificationOpsEventName)['fraudSuspected'];
  /** The refusal reason the hold gives: `range_held`, `owner_held`, `client_held` or `spend_cap_reserve`. */
  reason: 'range_held' | 'owner_held' | 'client_held' | 'spend_cap_reserve';
  /** `enforce`: starts are refused; `monitor`: only reported. */
  mode: 'enforce' | 'monitor';
  /** The number range of the start that tripped it (E.164 without its last digits). */
  range: string;
  /** Its operator prefix: calling code and national destination code (`+7985`). */
  prefix: string;
  /**
   * What is held: the start's `range`, its operator `prefix`, its `owner`, `client` key or
   * `network`, or (`spend_cap_reserve`) its `country`.
   */
  subject: 'range' | 'prefix' | 'owner' | 'client' | 'network' | 'country';
  /**
   * Why: `unconverted` (its starts do not complete), `fresh_burst` (a range or prefix nobody verified
   * in took a burst of starts), `slow_drip` (a prefix's starts over the last day do not complete),
   * `country_under_attack` (the stricter minimum while the country's traffic does not convert, in
   * the window or over the day), `spend_cap_reserve` (the cap's last share is kept for callers with a record).
   */
  rule: 'unconverted' | 'fresh_burst' | 'slow_drip' | 'country_under_attack' | 'spend_cap_reserve';
  /** ISO 3166 country of the number (or its calling code when it has none). */
  country: string;
  /** The owner of that start, when `owner()` gave one. */
  owner?: string;
  phoneNumberMasked: string;
  /** Whether the number's country was under attack (its traffic as a whole not converting). */
  countryUnderAttack: boolean;
  /** The held subject's counts in the sliding window, before this start. */
  counts: { starts: number; verified: number };
  /** Cool-off of this hold (0 for the reserve, which lasts while the cap is near). */
  holdMs: number;
  heldUntil: Date;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

/**
 * Payload of `verification.ledger_drift`: what the API charged and what the ledger expects by the
 * billing rules differ by more than `ledger.tolerance`. Emitted once per figure across instances.
 */
export interface LedgerDriftEvent {
  event: (typeof VerificationOpsEventName)['ledgerDrift'];
  /**
   * `usage`: a closed day's `GET /v1/usage` total against the ledger's sessions started that day;
   * `balance`: the balance fell by more than the charges the ledger counted between two readings.
   */
  source: 'usage' | 'balance';
  /** The UTC day (`YYYY-MM-DD`): the sessions' day for `usage`, the later reading's for `balance`. */
  date: string;
  /** What the ledger expects to have been charged (major units). */
  expected: number;
  /** What the API charged (`usage`) or debited from the balance (`balance`). */
  charged: number;
  /** `charged - expected`: positive when the API took more. */
  drift: number;
  tolerance: number;
  currency: string;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

/**
 * Payload of `verification.fallback_moment` (issue 47): a learned fallback moment jumped beyond its
 * recent range and is followed at a bounded pace, not adopted at once (a poisoned burst, a short
 * blip, or figures turned thin: a lasting change is reached within the hour). Once per jump, per
 * instance (each keeps its own adopted moments).
 */
export interface FallbackMomentEvent {
  event: (typeof VerificationOpsEventName)['fallbackMoment'];
  method: VerificationMethod;
  /** The calling code of the numbers it applies to (`+7`). */
  callingCode: string;
  /** The device hint it applies to; null: starts without one. */
  device: 'mobile' | 'desktop' | null;
  /** `learned`: the figures say `targetMs`; `thin`: they hold too few samples, `targetMs` is the fixed moment. */
  figures: 'learned' | 'thin';
  /** The moment adopted before the jump, ms after a step's start. */
  adoptedMs: number;
  /** Where the figures point. */
  targetMs: number;
  /** The moment adopted now, ms after a step's start: one bounded step from `adoptedMs`. */
  afterMs: number;
  at: Date;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

/** The event of a change of an owner's number (`PhoneChange`). */
export const PhoneChangeEventName = { phoneChanged: 'verification.phone_changed' } as const;

/**
 * Payload of `verification.phone_changed`: the host's `rebind` moved an owner's account to a new
 * number (not emitted when it answered `taken`). Notify the old number from your own records.
 */
export interface PhoneChangedEvent {
  /** `verification.phone_changed`. */
  event: (typeof PhoneChangeEventName)['phoneChanged'];
  /** The `owner(req)` whose number changed. */
  owner: string;
  /** The number the account had, masked (`+7******4567`); null when it had none. */
  oldPhoneNumberMasked: string | null;
  /** The number it has now, masked. */
  newPhoneNumberMasked: string;
  /** When the module asked the host's `rebind` (the module's clock). */
  changedAt: Date;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}

/**
 * Payload of `verification.method_health`: a method's health on an operator prefix changed (issue
 * 47). `degraded`: its recent completion (verified ÷ verified and rescued: steps another step of the
 * journey verified) dropped below 70 % of its week's, its fallback comes sooner; `demoted`: still so
 * 20 minutes on, it is no longer tried first; `healthy`: recovered. Emitted once per change across instances.
 */
export interface MethodHealthEvent {
  event: (typeof VerificationOpsEventName)['methodHealth'];
  method: VerificationMethod;
  /** The operator prefix (calling code and national destination code, `+7985`). */
  prefix: string;
  state: 'healthy' | 'degraded' | 'demoted';
  previous: 'healthy' | 'degraded' | 'demoted';
  /** Whether the recent figures judged were the operator prefix's own or its country's (too few of its own). */
  level: 'operator' | 'country';
  /** The recent window's and the week's rates: completion as judged, delivered ÷ started (shown, not judged; null: not shown). */
  recent: { completion: number | null; delivery: number | null };
  week: { completion: number | null; delivery: number | null };
  at: Date;
  /** The named registration it comes from (see VerificationEvent.registration). */
  registration?: string;
}
