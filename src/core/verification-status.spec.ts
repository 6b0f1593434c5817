import { describe, expect, it } from '@jest/globals';
import { VerificationEventName } from './verification-events.js';
import {
  announcedStatus,
  isTerminal,
  TERMINAL_STATUSES,
  terminalEvent,
  VERIFICATION_STATUSES,
} from './verification-status.js';

describe('verification statuses: verified, expired and failed are final, and nothing else is', () => {
  it('a terminal status is exactly one of verified, expired, failed', () => {
    expect([...TERMINAL_STATUSES].sort()).toStrictEqual(['expired', 'failed', 'verified']);
    expect(VERIFICATION_STATUSES.filter(isTerminal)).toStrictEqual(['verified', 'expired', 'failed']);
  });

  it('pending and unknown statuses are not terminal (an unknown status keeps the session followed)', () => {
    for (const status of [
      'sent',
      'delivered',
      'pending',
      '',
      'VERIFIED',
      'constructor',
      'toString',
      '__proto__',
    ])
      expect(isTerminal(status)).toBe(false);
  });

  it('each terminal status has its event, and each such event announces its status', () => {
    expect(terminalEvent('verified')).toBe(VerificationEventName.verified);
    expect(terminalEvent('expired')).toBe(VerificationEventName.expired);
    expect(terminalEvent('failed')).toBe(VerificationEventName.failed);
    for (const status of TERMINAL_STATUSES) expect(announcedStatus(terminalEvent(status)!)).toBe(status);
  });

  it('no event for a pending status; no status announced by code_required or an unknown event', () => {
    for (const status of ['sent', 'delivered', 'pending', 'toString'])
      expect(terminalEvent(status)).toBeUndefined();
    for (const event of [VerificationEventName.codeRequired, 'verification.sent', 'verified', 'toString'])
      expect(announcedStatus(event)).toBeUndefined();
  });
});
