import type { SandboxMethod } from './sandbox.options.js';
import type { SimulatedUser } from './sandbox-users.js';
import { toWireMoney, type WireMoney } from './sandbox-money.js';
import type { OperatorState, SandboxControlSession, SessionStatus } from './sandbox-control.types.js';

export type { OperatorState, SessionStatus } from './sandbox-control.types.js';

export const TERMINAL: ReadonlySet<SessionStatus> = new Set(['verified', 'expired', 'failed']);

/**
 * A verification session as the sandbox keeps it: what the control API shows of it, with its times in
 * ms of the sandbox clock, and what only the sandbox needs.
 */
export interface SandboxSession extends Omit<
  SandboxControlSession,
  'cost' | 'createdAt' | 'expiresAt' | 'verifiedAt'
> {
  chargedAt: number | null;
  costKopecks: number;
  /** What was debited when a recalculation changed it (`recalculate`); otherwise `costKopecks`. */
  recalculatedKopecks?: number;
  createdAt: number;
  expiresAt: number;
  verifiedAt: number | null;
  /** Last time the status changed (delivery, verification, expiry, failure). */
  updatedAt: number;
  /** operator_id: the code the operator accepted (a resubmission is 409 without spending an attempt). */
  acceptedCode: string | null;
  /** When the user got the code (delivery, the bot's code after the share, the operator's SMS fallback). */
  deliveredAt: number | null;
  /** The simulated user, when the account's population covers the method (fixed at initiation). */
  user: SimulatedUser | null;
}

/** The wire name of a method: `msgr1_otp` travels as the schema's `msgr1`, the others as they are. */
export function wireMethod(method: SandboxMethod): string {
  return method === 'msgr1_otp' ? 'msgr1' : method;
}

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));

export function cost(session: SandboxSession): WireMoney {
  return toWireMoney(session.costKopecks);
}

/** `POST /v1/verify` 201 body: common fields plus the method's extras. */
export function toInitiateResponse(s: SandboxSession): Record<string, unknown> {
  const base: Record<string, unknown> = {
    request_id: s.requestId,
    phone_number: s.phoneNumber,
    method: wireMethod(s.method),
    status: s.status,
    cost: cost(s),
    expires_at: iso(s.expiresAt),
  };
  switch (s.method) {
    case 'reverse_flash_call':
      return { ...base, number_to_call: s.numberToCall, code_length: s.codeLength };
    case 'msgr2_bot':
      return { ...base, deep_link: s.deepLink, code_length: s.codeLength };
    case 'operator_id':
      return { ...base, awaiting_code: s.awaitingCode };
    default:
      return { ...base, code_length: s.codeLength };
  }
}

/** `GET /v1/verify/{request_id}` 200 body. */
export function toWireSession(s: SandboxSession): Record<string, unknown> {
  return {
    request_id: s.requestId,
    phone_number: s.phoneNumber,
    method: wireMethod(s.method),
    status: s.status,
    cost: cost(s),
    created_at: iso(s.createdAt),
    verified_at: isoOrNull(s.verifiedAt),
    expires_at: iso(s.expiresAt),
    awaiting_code: s.awaitingCode,
  };
}

/** The whole internal state (control API and `sb.getSession`), with the canonical method name. */
export interface SandboxSessionView {
  request_id: string;
  api_key: string;
  phone_number: string;
  method: SandboxMethod;
  status: SessionStatus;
  code: string | null;
  code_length: number;
  incoming_number: string | null;
  number_to_call: string | null;
  deep_link: string | null;
  attempts_remaining: number;
  awaiting_code: boolean;
  charged: boolean;
  cost: WireMoney;
  created_at: string;
  expires_at: string;
  verified_at: string | null;
  operator_state: OperatorState | null;
  shared_phone_number: string | null;
}

export function toControlView(s: SandboxSession): SandboxSessionView {
  return {
    request_id: s.requestId,
    api_key: s.apiKey,
    phone_number: s.phoneNumber,
    method: s.method,
    status: s.status,
    code: s.code,
    code_length: s.codeLength,
    incoming_number: s.incomingNumber,
    number_to_call: s.numberToCall,
    deep_link: s.deepLink,
    attempts_remaining: s.attemptsRemaining,
    awaiting_code: s.awaitingCode,
    charged: s.charged,
    cost: cost(s),
    created_at: iso(s.createdAt),
    expires_at: iso(s.expiresAt),
    verified_at: isoOrNull(s.verifiedAt),
    operator_state: s.operatorState,
    shared_phone_number: s.sharedPhoneNumber,
  };
}
