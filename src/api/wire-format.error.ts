import { PhoneVerificationError } from '../core/phone-verification.error.js';

/**
 * Thrown by the mapper when a 2xx body lacks what makes it usable (an id, a status, ...). The client turns
 * it into a VerificationApiUnavailableError('bad_response'); the message names the field, never a value.
 */
export class WireFormatError extends PhoneVerificationError {}
