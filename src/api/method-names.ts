import {
  VERIFICATION_METHODS,
  type InitiateResult,
  type KnownInitiateResult,
  type KnownVerificationMethod,
  type VerificationMethod,
} from './api.types.js';

/** Wire aliases of canonical method names: the request schema and `by_method` say `msgr1`, the guides `msgr1_otp`. */
const WIRE_ALIASES: Readonly<Record<string, KnownVerificationMethod>> = { msgr1: 'msgr1_otp' };

const KNOWN = new Set<string>(VERIFICATION_METHODS);

export function isKnownMethod(method: string): method is KnownVerificationMethod {
  return KNOWN.has(method);
}

/** A method name from the wire, in canonical form (`msgr1` → `msgr1_otp`); unknown names pass through as sent. */
export function normalizeMethod(wire: string): VerificationMethod {
  return WIRE_ALIASES[wire] ?? wire;
}

/**
 * The name sent in `POST /v1/verify`. `msgr1_otp` is sent as `msgr1_otp`, the guides' name: the schema
 * enumeration (`msgr1`) is evidently incomplete (it lacks `msgr2_bot` and `operator_id`, which the guides
 * send and the API accepts), so the guides' vocabulary is the one the API is known to take as a whole.
 * Every other name is sent as given.
 */
export function toWireMethod(method: VerificationMethod): string {
  return normalizeMethod(method);
}

/** Whether an initiate result is one of the known variants (then `switch (result.method)` narrows fully). */
export function isKnownInitiateResult(result: InitiateResult): result is KnownInitiateResult {
  return !('raw' in result) && isKnownMethod(result.method);
}
