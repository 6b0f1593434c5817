/** The statuses of a verification session, which of them are final, and the events that announce those. */
import { VerificationEventName, type VerificationEventType } from './verification-events.js';

export const VERIFICATION_STATUSES = ['sent', 'delivered', 'verified', 'expired', 'failed'] as const;
export type KnownVerificationStatus = (typeof VERIFICATION_STATUSES)[number];
export type VerificationStatus = KnownVerificationStatus | (string & { readonly __unknownStatus?: never });

/** The final statuses, each with the event that announces it (upstream webhook and the module's own). */
const TERMINAL_EVENTS = {
  verified: VerificationEventName.verified,
  expired: VerificationEventName.expired,
  failed: VerificationEventName.failed,
} as const satisfies Partial<Record<KnownVerificationStatus, VerificationEventType>>;
export type TerminalStatus = keyof typeof TERMINAL_EVENTS;
export const TERMINAL_STATUSES: readonly TerminalStatus[] = Object.keys(TERMINAL_EVENTS) as TerminalStatus[];

/** A terminal status is final: nothing moves a session out of it. Unknown statuses are not terminal. */
export function isTerminal(status: VerificationStatus): status is TerminalStatus {
  return Object.hasOwn(TERMINAL_EVENTS, status);
}

/** The event that announces a terminal status (`verified` → `verification.verified`); undefined for any other. */
export function terminalEvent(status: VerificationStatus): VerificationEventType | undefined {
  return isTerminal(status) ? TERMINAL_EVENTS[status] : undefined;
}

/** The terminal status an event announces (`verification.verified` → `verified`); undefined for any other event. */
export function announcedStatus(event: string): TerminalStatus | undefined {
  return TERMINAL_STATUSES.find((status) => TERMINAL_EVENTS[status] === event);
}
