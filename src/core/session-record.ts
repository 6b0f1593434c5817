import type { Money } from './money.js';
import type { VerificationMethod } from './verification-method.js';
import { isTerminal, type VerificationStatus } from './verification-status.js';

export { isTerminal };

/**
 * What the module keeps about a session it started, in the store under `session:{requestId}`.
 * Times are ms since the epoch. `cost` stays server-side.
 */
export interface SessionRecord {
  requestId: string;
  phoneNumber: string;
  method: VerificationMethod;
  owner?: string;
  status: VerificationStatus;
  awaitingCode: boolean;
  codeLength?: number;
  numberToCall?: string;
  deepLink?: string;
  createdAt: number;
  expiresAt: number;
  verifiedAt: number | null;
  cost?: Money;
  /** An operator_id session that fell back to the SMS code at some point (code_required is due). */
  fallback?: boolean;
}

/** Spec pace: every 1–2 s for reverse flash call, every 2–3 s otherwise, no faster. */
export function pollIntervalMs(method: VerificationMethod): number {
  return method === 'reverse_flash_call' ? 1500 : 2500;
}

/** Whether the frontend must show a code field now. */
export function awaitsCode(record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status'>): boolean {
  if (isTerminal(record.status)) return false;
  switch (record.method) {
    case 'reverse_flash_call':
      return false;
    case 'operator_id':
    case 'msgr2_bot':
      return record.awaitingCode;
    default:
      return true;
  }
}

/**
 * Whether the session's next change for the frontend comes without a webhook. The API's webhooks
 * report outcomes and operator_id's code request; msgr2_bot's code request (the bot sends the code
 * once the user shares the number) is seen only by asking.
 */
export function awaitsUnreportedChange(
  record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status'>,
): boolean {
  return record.method === 'msgr2_bot' && !record.awaitingCode && !isTerminal(record.status);
}

/** Digits a code may have: the spec's bounds of a check request, for a session whose exact length the API did not give. */
export const CODE_LENGTH_BOUNDS = { min: 4, max: 8 } as const;

/**
 * The digits the code field takes while a code is awaited: exactly `codeLength` when the API gave
 * it, else the spec's bounds (operator_id's SMS fallback, whose length the API does not say, and a
 * record rebuilt after a restart). Nothing while no code is awaited.
 */
export function codeLengthRange(
  record: Pick<SessionRecord, 'method' | 'awaitingCode' | 'status' | 'codeLength'>,
): { codeLengthMin: number; codeLengthMax: number } | undefined {
  if (!awaitsCode(record)) return undefined;
  const exact = record.codeLength;
  return exact === undefined
    ? { codeLengthMin: CODE_LENGTH_BOUNDS.min, codeLengthMax: CODE_LENGTH_BOUNDS.max }
    : { codeLengthMin: exact, codeLengthMax: exact };
}
