/**
 * `nestjs-phone-verification/element`: `<phone-verification>`, the whole verification flow in one
 * element, on the browser client. Importing this module defines the element (once).
 */
import { PhoneVerificationElement } from './phone-verification.js';

export {
  PhoneVerificationElement,
  type HostHeaders,
  type PhoneVerificationEventDetail,
} from './phone-verification.js';
export { MESSAGES, type TextKey, type Texts } from './messages.js';

if (typeof customElements !== 'undefined' && !customElements.get('phone-verification'))
  customElements.define('phone-verification', PhoneVerificationElement);
export type {
  VerificationClient,
  VerificationClientError,
  VerificationClientOptions,
  VerificationState,
} from '../client/index.js';
