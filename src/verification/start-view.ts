import { awaitsCode, codeLengthRange, type SessionRecord } from '../core/session-record.js';
import { pollIntervalMs } from '../core/verification-method.js';
import type { StartView } from './verification.views.js';

/** The start answer (a switch's too: the same answer for the journey's new session). */
export function toStartView(
  verificationId: string,
  record: SessionRecord,
  resendAvailableAt: Date | null,
  resumed: boolean,
): StartView {
  return {
    verificationId,
    method: record.method,
    status: record.status,
    phoneNumber: record.phoneNumber,
    expiresAt: new Date(record.expiresAt),
    pollIntervalMs: pollIntervalMs(record.method),
    resendAvailableAt,
    codeLength: record.codeLength,
    ...codeLengthRange(record),
    numberToCall: record.numberToCall,
    deepLink: record.deepLink,
    awaitingCode: awaitsCode(record),
    resumed,
  };
}
