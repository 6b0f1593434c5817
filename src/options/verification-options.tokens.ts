/** Options after defaults and validation (`ResolvedVerificationOptions`). */
export const RESOLVED_VERIFICATION_OPTIONS = Symbol('RESOLVED_VERIFICATION_OPTIONS');
