import type { VerificationSession } from '../api/api.types.js';
import type { DataKeys } from '../core/data-keys.js';
import { methodTraits, type VerificationMethod } from '../core/verification-method.js';
import type { VerificationStatus } from '../core/verification-status.js';
import type { TestNumberEntry } from './test-number-book.js';

/**
 * A test session as it reads (the module's stand-in for the API's session): its start as stored, with
 * what its checks and its end made of it (see TestSessionStore).
 */
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
  /** Keyed digest of who started it (its owner, else its client network): whose wrong-code budget its checks take. */
  startedBy?: string;
  /** Keyed digest of its client network, when its starter is an owner (the network's budget is taken too). */
  network?: string;
  /** Keyed digest of the block whose hard ceiling its compared codes count in (see `starterBlock`). */
  block?: string;
  /** A code was checked for it (an attempt taken): its spare slot is nobody else's (see `chooseSpareSlot`). */
  checked?: boolean;
  /** Its spare slot was taken from another starter's held session: nobody else's start takes it. */
  replaced?: boolean;
}

/** How a test session ended: the first end recorded stands (see TestSessionStore.end). */
export interface TestSessionEnd {
  status: 'verified' | 'failed' | 'expired';
  verifiedAt: number | null;
}

/** The session as its start, its attempts used and its end make it. */
export function composed(
  start: TestSessionState,
  attemptsUsed: number,
  end: TestSessionEnd | null,
): TestSessionState {
  const checked = attemptsUsed > 0 ? { ...start, checked: true } : start;
  return end === null ? checked : ended(checked, end);
}

/** The session as its end leaves it. */
export function ended(state: TestSessionState, end: TestSessionEnd): TestSessionState {
  return { ...state, status: end.status, verifiedAt: end.verifiedAt, awaitingCode: false };
}

/**
 * A test session's delivery (`sent` -> `delivered`), as a real session's channel delivers its code on its
 * own (SMS, flash call, a messenger's code, a voice call): the earliest delay after its start (ms), and
 * how much later it may come. Each session's delay is drawn from a keyed digest of its request id
 * (`testDeliveryDelayMs`): the same on every instance and at every read, unknown to a caller, and not the
 * same from one session to the next.
 */
export const TEST_DELIVERY_MIN_MS = 2_000;
export const TEST_DELIVERY_SPREAD_MS = 6_000;

/** How long after its start a test session reads `delivered`, when its method's channel delivers on its own. */
export function testDeliveryDelayMs(keys: DataKeys, requestId: string): number {
  const draw = Buffer.from(keys.digest(`test-delivery|${requestId}`), 'base64url').readUInt32BE(0);
  return TEST_DELIVERY_MIN_MS + (draw % TEST_DELIVERY_SPREAD_MS);
}

/**
 * The session as it reads at `now`: delivered once its delay has passed, when its method's code goes
 * out at the start (a bot's code waits for the user, a reverse call and the operator's push are never
 * `delivered` before their outcome: see `asked`).
 */
export function delivered(state: TestSessionState, keys: DataKeys, now: number): TestSessionState {
  if (state.status !== 'sent' || methodTraits(state.method).codeAwaited !== 'from_start') return state;
  const due = state.createdAt + testDeliveryDelayMs(keys, state.requestId);
  return now >= due ? { ...state, status: 'delivered' } : state;
}

/**
 * The end a terminal outcome of the number gives a pending session at its first read (as if the user had
 * acted at once); none for the others.
 */
export function outcomeEnd(entry: TestNumberEntry | undefined, now: number): TestSessionEnd | undefined {
  switch (entry?.outcome) {
    case 'verified':
      return { status: 'verified', verifiedAt: now };
    case 'expired':
    case 'failed':
      return { status: entry.outcome, verifiedAt: null };
    default:
      return undefined;
  }
}

/**
 * A pending session of a number whose outcome is `code_required`: its code is asked for from its first
 * read on. A bot's code is asked for once the user shared the number there: delivered, as a real session.
 */
export function asked(state: TestSessionState, entry: TestNumberEntry | undefined): TestSessionState {
  if (entry?.outcome !== 'code_required') return state;
  return { ...state, awaitingCode: true, ...(state.method === 'msgr2_bot' ? { status: 'delivered' } : {}) };
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
