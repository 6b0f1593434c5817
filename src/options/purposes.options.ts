/** The options of `purposes`: what a verification is for, and each purpose's policy, given and resolved. */
import type { KnownVerificationMethod } from '../core/verification-method.js';
import type { RateLimit } from './limits.options.js';

/** The purposes every registration accepts on a start without declaring them. */
export const BUILT_IN_PURPOSES = ['signup', 'login', 'step_up', 'change_phone'] as const;
/** One of BUILT_IN_PURPOSES. */
export type BuiltInPurpose = (typeof BUILT_IN_PURPOSES)[number];

/** What a purpose is written as, on a start and as a key of `purposes`: lower-case letters, digits, `_`, `-`. */
export const PURPOSE_PATTERN = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * One purpose's policy (`purposes[name]`); what it leaves out is the registration's own setting.
 */
export interface PurposePolicy {
  /**
   * The methods a start of this purpose may use, among those the registration offers (`methods`, the
   * account's price list); `[]` allows none (every start of it is refused, 400 `method_not_available`).
   * Default: every method the registration offers.
   */
  methods?: KnownVerificationMethod[];
  /** Limits of this purpose's starts, on top of the registration's `limits`. */
  limits?: {
    /** Starts of this purpose per phone number from all callers, per window (429 `start_phone_limit`). */
    startPerPhone?: RateLimit;
  };
  /** How long a claim of a verification of this purpose is accepted, ms. Default `verifiedPhone.claimTtlMs`. */
  claimTtlMs?: number;
}

/** `purposes`: a policy per purpose; a key that is not a built-in purpose declares a host's own. */
export type PurposesOptions = Record<string, PurposePolicy>;

/** A purpose's policy after resolution (the default policy for an undeclared built-in one, or none). */
export interface ResolvedPurposePolicy {
  /** undefined: every method the registration offers. */
  methods: KnownVerificationMethod[] | undefined;
  startPerPhone: RateLimit | false;
  claimTtlMs: number;
}

export interface ResolvedPurposes {
  /** The policy of a start without a purpose and of an undeclared built-in purpose. */
  default: ResolvedPurposePolicy;
  /** The declared ones, by name. */
  declared: Readonly<Record<string, ResolvedPurposePolicy>>;
}

/** The longest a claim of any purpose of the registration is accepted, ms: what revokes or erases claims must last as long. */
export function longestClaimTtlMs(purposes: ResolvedPurposes): number {
  return Math.max(purposes.default.claimTtlMs, ...Object.values(purposes.declared).map((p) => p.claimTtlMs));
}

/** Whether `purpose` may be named on a start of a registration resolved to `purposes`. */
export function isAcceptedPurpose(purposes: ResolvedPurposes, purpose: string): boolean {
  return (
    (BUILT_IN_PURPOSES as readonly string[]).includes(purpose) || Object.hasOwn(purposes.declared, purpose)
  );
}

/** The policy a start of `purpose` (undefined: none named) follows. */
export function purposePolicy(
  purposes: ResolvedPurposes,
  purpose: string | undefined,
): ResolvedPurposePolicy {
  return purpose !== undefined && Object.hasOwn(purposes.declared, purpose)
    ? purposes.declared[purpose]!
    : purposes.default;
}

/** The methods among `offered` a start of `purpose` may use, in their order. */
export function methodsForPurpose(
  purposes: ResolvedPurposes,
  purpose: string | undefined,
  offered: readonly KnownVerificationMethod[],
): KnownVerificationMethod[] {
  const allowed = purposePolicy(purposes, purpose).methods;
  return allowed === undefined ? [...offered] : offered.filter((method) => allowed.includes(method));
}

const HOUR = 3_600_000;

/**
 * Policies for common cases, to give as a purpose's policy or to spread into one
 * (`{ ...PURPOSE_PRESETS.stepUp, ...PURPOSE_PRESETS.noForeignMessengers }`).
 */
export const PURPOSE_PRESETS = Object.freeze({
  /**
   * No foreign messengers (`msgr1_otp`, `msgr2_bot`): calls, SMS and the operator's own check only,
   * for hosts under Russia's 41-FZ (banks, operators, marketplaces, large sites, since June 2025).
   */
  noForeignMessengers: Object.freeze({
    methods: ['reverse_flash_call', 'flash_call', 'sms', 'operator_id', 'voice'] as KnownVerificationMethod[],
  }),
  /** A sensitive action (payout, change of credentials): a claim of 5 minutes, 5 starts an hour per number. */
  stepUp: Object.freeze({
    claimTtlMs: 5 * 60_000,
    limits: Object.freeze({ startPerPhone: Object.freeze({ points: 5, windowMs: HOUR }) }),
  }),
  /** A change of the account's number: a claim of 5 minutes, 3 starts an hour per new number. */
  changePhone: Object.freeze({
    claimTtlMs: 5 * 60_000,
    limits: Object.freeze({ startPerPhone: Object.freeze({ points: 3, windowMs: HOUR }) }),
  }),
} satisfies Record<string, PurposePolicy>);
