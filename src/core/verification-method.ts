/** The verification methods: the domain's one list of them. */

/** Canonical method names (the guides' ones). The schema name `msgr1` is normalised to `msgr1_otp`. */
export const VERIFICATION_METHODS = [
  'reverse_flash_call',
  'flash_call',
  'msgr1_otp',
  'msgr2_bot',
  'sms',
  'operator_id',
  'voice',
] as const;
export type KnownVerificationMethod = (typeof VERIFICATION_METHODS)[number];
/** A known method, or a method this version of the package does not know yet (passed through as sent). */
export type VerificationMethod = KnownVerificationMethod | (string & { readonly __unknownMethod?: never });
