import type { VerificationMethod, VerificationStatus } from '../api/api.types.js';

/** Names of the Nest events emitted through @nestjs/event-emitter (equal to the upstream event names). */
export const VerificationEventName = {
  verified: 'verification.verified',
  failed: 'verification.failed',
  expired: 'verification.expired',
  codeRequired: 'verification.code_required',
} as const;
export type VerificationEventType = (typeof VerificationEventName)[keyof typeof VerificationEventName];
/** Short names accepted by `@OnVerificationEvent(...)`. */
export type VerificationEventShortName = 'verified' | 'failed' | 'expired' | 'code_required';

/** Operational events for the people who run the host app. */
export const VerificationOpsEventName = {
  balanceInsufficient: 'verification.balance_insufficient',
  balanceLow: 'verification.balance_low',
  spendCapReached: 'verification.spend_cap_reached',
} as const;

/** Where the module learned the outcome. */
export type VerificationEventSource = 'webhook' | 'poll' | 'check';

/** Payload of `verification.verified|failed|expired|code_required`. What the API says, not what a webhook claimed. */
export interface VerificationEvent {
  event: VerificationEventType;
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
  source: VerificationEventSource;
}

export interface BalanceEvent {
  event: (typeof VerificationOpsEventName)['balanceInsufficient' | 'balanceLow'];
  /** Balance amount as last read (null when the API only answered 402). */
  amount: number | null;
  currency: string;
  threshold?: number;
}

export interface SpendCapReachedEvent {
  event: (typeof VerificationOpsEventName)['spendCapReached'];
  /** Spent in the current window, in major units (RUB). */
  spent: number;
  cap: number;
  currency: string;
  windowMs: number;
  windowEndsAt: Date;
}
