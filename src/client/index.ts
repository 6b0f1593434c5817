/** `nestjs-phone-verification/client`: the browser client of the module's client routes (no dependencies). */
export {
  VerificationClient,
  type StartInput,
  type VerificationClientOptions,
  type VerificationStateListener,
} from './verification-client.js';
export { VerificationClientError, type VerificationErrorCode, type VerificationProblem } from './errors.js';
export type {
  EventSourceFactory,
  EventSourceLike,
  FetchLike,
  RequestInitLike,
  ResponseLike,
} from './transport.js';
export type { VerificationStorage } from './storage.js';
export { detectDevice, type DeviceHint } from './device-hint.js';
export type {
  CancelAnswer,
  CheckAnswer,
  StartAnswer,
  StatusAnswer,
  UserPrompt,
  VerificationPhase,
  VerificationState,
} from './types.js';

import { VerificationClient, type VerificationClientOptions } from './verification-client.js';

export function createVerificationClient(options?: VerificationClientOptions): VerificationClient {
  return new VerificationClient(options);
}
