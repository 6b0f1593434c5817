export * from './api.types.js';
export type * from './api.wire.js';
export {
  API_CLIENT_DEFAULTS,
  VERIFICATION_API_CLIENT_OPTIONS,
  type ApiOperation,
  type ApiRequestInfo,
  type ApiTransport,
  type VerificationApiClientOptions,
} from './api-client.options.js';
export { isKnownInitiateResult, isKnownMethod, normalizeMethod, toWireMethod } from './method-names.js';
export { VerificationApiClient } from './verification-api.client.js';
export {
  VerificationApiError,
  VerificationApiUnavailableError,
  type UnavailableReason,
} from './verification-api.error.js';
