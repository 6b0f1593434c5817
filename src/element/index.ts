/**
 * `nestjs-phone-verification/element`: `<phone-verification>`, the whole verification flow in one
 * element, on the browser client. Importing this module defines the element (once).
 */
import { PhoneVerificationElement } from './phone-verification.js';

export {
  PhoneVerificationElement,
  PhoneVerificationElementBase,
  type HostHeaders,
  type PhoneVerificationEventDetail,
} from './phone-verification.js';
export { EN_TEXTS, MESSAGES, type TextKey, type Texts } from './messages.js';

if (typeof customElements !== 'undefined' && !customElements.get('phone-verification'))
  customElements.define('phone-verification', PhoneVerificationElement);
/* The browser client's types the element's properties and its `client` use. */
export type {
  DeviceHint,
  EventSourceFactory,
  EventSourceLike,
  FetchLike,
  RequestInitLike,
  ResponseLike,
  StartInput,
  UserPrompt,
  VerificationClient,
  VerificationClientError,
  VerificationClientOptions,
  VerificationErrorCode,
  VerificationPhase,
  VerificationProblem,
  VerificationState,
  VerificationStateListener,
  VerificationStorage,
} from '../client/index.js';
