import type { VerificationState } from '../client/index.js';

/** `detail` of the element's events. */
export interface PhoneVerificationEventDetail {
  verification_id: string | null;
  method: string | null;
  phone_number: string | null;
  /** `failed`, `error`: the refusal's code, if any. */
  error_code?: string;
  /** `error`: the HTTP status (0 without an answer) and the message the element shows. */
  status?: number;
  message?: string;
}

/** One of the element's events: bubbling and composed, so a host hears it on the element or above it. */
export function elementEvent(
  type: string,
  state: VerificationState,
  extra: Partial<PhoneVerificationEventDetail> = {},
): CustomEvent<PhoneVerificationEventDetail> {
  const detail: PhoneVerificationEventDetail = {
    verification_id: state.verificationId,
    method: state.method,
    phone_number: state.phoneNumber,
    ...extra,
  };
  return new CustomEvent(type, { detail, bubbles: true, composed: true });
}
