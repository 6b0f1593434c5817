/** The statuses of a verification session, and which of them are final. */

export const VERIFICATION_STATUSES = ['sent', 'delivered', 'verified', 'expired', 'failed'] as const;
export type KnownVerificationStatus = (typeof VERIFICATION_STATUSES)[number];
export type VerificationStatus = KnownVerificationStatus | (string & { readonly __unknownStatus?: never });
export const TERMINAL_STATUSES: readonly KnownVerificationStatus[] = ['verified', 'expired', 'failed'];

/** A terminal status is final: nothing moves a session out of it. */
export function isTerminal(status: VerificationStatus): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(status);
}
