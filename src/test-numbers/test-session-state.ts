import type { VerificationSession } from '../api/api.types.js';
import type { VerificationMethod } from '../core/verification-method.js';
import type { VerificationStatus } from '../core/verification-status.js';
import type { TestNumberEntry } from './test-number-book.js';

/** A test session as the store keeps it (the module's stand-in for the API's session). */
export interface TestSessionState {
  requestId: string;
  phoneNumber: string;
  method: VerificationMethod;
  status: VerificationStatus;
  awaitingCode: boolean;
  createdAt: number;
  expiresAt: number;
  verifiedAt: number | null;
  attemptsLeft: number;
  /** The number's outcome was played (at the first read after the start). */
  played: boolean;
  /** Keyed digest of who started it (its owner, else its client network): whose wrong-code budget its checks take. */
  startedBy?: string;
  /** Keyed digest of its client network, when its starter is an owner (the network's budget is taken too). */
  network?: string;
  /** Keyed digest of the block whose hard ceiling its compared codes count in (see `starterBlock`). */
  block?: string;
  /** A code was checked for it: its spare slot is nobody else's (see `chooseSpareSlot`). */
  checked?: boolean;
  /** Its spare slot was taken from another starter's held session: nobody else's start takes it. */
  replaced?: boolean;
}

/** The number's outcome, played once. */
export function played(
  state: TestSessionState,
  entry: TestNumberEntry | undefined,
  now: number,
): TestSessionState {
  const next = { ...state, played: true };
  switch (entry?.outcome) {
    case 'verified':
      return { ...next, status: 'verified', verifiedAt: now };
    case 'expired':
      return { ...next, status: 'expired' };
    case 'failed':
      return { ...next, status: 'failed' };
    case 'code_required':
      return { ...next, awaitingCode: true };
    default:
      return next;
  }
}

export function toSession(state: TestSessionState): VerificationSession {
  return {
    requestId: state.requestId,
    phoneNumber: state.phoneNumber,
    method: state.method,
    status: state.status,
    createdAt: new Date(state.createdAt),
    expiresAt: new Date(state.expiresAt),
    verifiedAt: state.verifiedAt === null ? null : new Date(state.verifiedAt),
    awaitingCode: state.awaitingCode,
  };
}
