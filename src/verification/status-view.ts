import { isJourneyTerminal, type JourneyStatus } from '../core/journey.js';
import { maskPhoneNumber } from '../core/phone-mask.js';
import { awaitsCode, codeLengthRange, type SessionRecord } from '../core/session-record.js';
import type { KnownVerificationMethod, VerificationMethod } from '../core/verification-method.js';
import { pollIntervalMs } from '../core/verification-method.js';
import type { StatusView } from './verification.views.js';

/** What the status answer tells of the journey beyond its answering session. */
export interface JourneyFacts {
  status: JourneyStatus;
  methodsTried: VerificationMethod[];
  switchMethods: KnownVerificationMethod[];
  fallbackAvailableAt?: number;
}

/**
 * What a frontend may see of a journey, from its answering session's record: the status route's and
 * the status stream's answer. Once canceled, no code field is shown.
 */
export function toStatusView(
  verificationId: string,
  record: SessionRecord,
  journey: JourneyFacts,
): StatusView {
  const over = isJourneyTerminal(journey.status);
  return {
    verificationId,
    method: record.method,
    status: journey.status,
    phoneNumberMasked: maskPhoneNumber(record.phoneNumber),
    expiresAt: new Date(record.expiresAt),
    verifiedAt: record.verifiedAt === null ? null : new Date(record.verifiedAt),
    awaitingCode: !over && awaitsCode(record),
    pollIntervalMs: pollIntervalMs(record.method),
    codeLength: record.codeLength,
    ...(over ? undefined : codeLengthRange(record)),
    numberToCall: record.numberToCall,
    deepLink: record.deepLink,
    methodsTried: journey.methodsTried,
    switchMethods: journey.switchMethods,
    ...(journey.fallbackAvailableAt === undefined
      ? {}
      : { fallbackAvailableAt: new Date(journey.fallbackAvailableAt) }),
  };
}
