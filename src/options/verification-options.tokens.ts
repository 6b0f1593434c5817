/** Options after defaults and validation (`ResolvedVerificationOptions`). */
export const RESOLVED_VERIFICATION_OPTIONS = Symbol('RESOLVED_VERIFICATION_OPTIONS');
/** Route paths fixed when the module is imported (`RouteSettings`). */
export const VERIFICATION_ROUTE_SETTINGS = Symbol('VERIFICATION_ROUTE_SETTINGS');
