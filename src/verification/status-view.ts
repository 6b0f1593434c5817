import { maskPhoneNumber } from '../core/phone-mask.js';
import { awaitsCode, codeLengthRange, type SessionRecord } from '../core/session-record.js';
import { pollIntervalMs } from '../core/verification-method.js';
import type { StatusView } from './verification.views.js';

/** What a frontend may see of a session record: the status route's and the status stream's answer. */
export function toStatusView(verificationId: string, record: SessionRecord): StatusView {
  return {
    verificationId,
    method: record.method,
    status: record.status,
    phoneNumberMasked: maskPhoneNumber(record.phoneNumber),
    expiresAt: new Date(record.expiresAt),
    verifiedAt: record.verifiedAt === null ? null : new Date(record.verifiedAt),
    awaitingCode: awaitsCode(record),
    pollIntervalMs: pollIntervalMs(record.method),
    codeLength: record.codeLength,
    ...codeLengthRange(record),
    numberToCall: record.numberToCall,
    deepLink: record.deepLink,
  };
}
