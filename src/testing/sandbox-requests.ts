import { canonicalMethod } from './sandbox-accounts.js';
import { normalizeE164 } from './sandbox-phone.js';
import { DEFAULT_EXPIRY_SECONDS, MAX_EXPIRY_SECONDS, type SandboxMethod } from './sandbox.options.js';
import { SandboxProblem, validationError } from './problem.js';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isGuid = (value: unknown): value is string => typeof value === 'string' && GUID.test(value);

/** A `POST /v1/verify` body the sandbox accepts; `asked` is the method as the caller wrote it. */
export interface InitiateRequest {
  phoneNumber: string;
  method: SandboxMethod;
  expirySeconds: number;
  asked: unknown;
}

/** The body of `POST /v1/verify`, or the API's 400 for what is wrong in it. */
export function initiateRequest(body: unknown, minExpirySeconds: number): InitiateRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError('The body must be a JSON object with phone_number and method.');
  }
  const input = body as Record<string, unknown>;
  const phoneNumber = normalizeE164(input.phone_number);
  if (!phoneNumber) throw validationError('phone_number must be an E.164 number, for example +79991234567.');
  if (input.method === 'voice') {
    throw new SandboxProblem(
      400,
      'method_not_available',
      'The voice method is coming soon and cannot be used yet.',
    );
  }
  const method = canonicalMethod(input.method);
  if (!method) {
    throw validationError(
      'method must be one of reverse_flash_call, flash_call, msgr1 (msgr1_otp), msgr2_bot, sms, operator_id.',
    );
  }
  const expirySeconds = input.expiry_seconds ?? DEFAULT_EXPIRY_SECONDS;
  if (
    typeof expirySeconds !== 'number' ||
    !Number.isInteger(expirySeconds) ||
    expirySeconds < minExpirySeconds ||
    expirySeconds > MAX_EXPIRY_SECONDS
  ) {
    throw validationError(
      `expiry_seconds must be an integer from ${minExpirySeconds} to ${MAX_EXPIRY_SECONDS}.`,
    );
  }
  return { phoneNumber, method, expirySeconds, asked: input.method };
}

/** The body of `POST /v1/verify/check`, or the API's 400 for what is wrong in it. */
export function checkRequest(body: unknown): { requestId: string; code: string } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw validationError('The body must be a JSON object with request_id and code.');
  }
  const input = body as Record<string, unknown>;
  if (!isGuid(input.request_id)) throw validationError('request_id must be a GUID.');
  if (typeof input.code !== 'string' || !/^\d{4,8}$/.test(input.code)) {
    throw validationError('code must be a string of 4 to 8 digits.');
  }
  return { requestId: input.request_id, code: input.code };
}
