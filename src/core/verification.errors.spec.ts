import { describe, expect, it } from '@jest/globals';
import {
  asVerificationError,
  CLIENT_ERROR_STATUSES,
  VerificationClientError,
  VerificationError,
  type ClientErrorCode,
} from './verification.errors.js';

/** The wire contract of each error code: its HTTP status and the problem document's title. */
const CONTRACT: Record<ClientErrorCode, [number, string]> = {
  validation_error: [400, 'Invalid request'],
  invalid_code: [400, 'Invalid code'],
  method_not_available: [400, 'Method not available'],
  phone_not_allowed: [400, 'Phone number not allowed'],
  not_found: [404, 'Verification not found'],
  not_pending: [409, 'Verification is not pending'],
  rate_limit_exceeded: [429, 'Too many requests'],
  too_many_wrong_codes: [429, 'Too many wrong codes'],
  start_refused: [403, 'Start refused'],
  service_unavailable: [503, 'Service unavailable'],
  invalid_signature: [401, 'Invalid webhook signature'],
  payload_too_large: [413, 'Payload too large'],
  unsupported_media_type: [415, 'Unsupported media type'],
  cross_site_request: [403, 'Cross-site request refused'],
  journey_limit_reached: [409, 'Journey limit reached'],
  fallback_not_available: [409, 'Fallback not available yet'],
  switch_in_progress: [409, 'Switch in progress'],
  method_held: [409, 'Method held'],
  phone_verification_required: [403, 'Phone verification required'],
  phone_not_verified: [409, 'Phone not verified'],
  purpose_not_allowed: [400, 'Purpose not allowed'],
  step_up_required: [403, 'Step-up required'],
};

describe('VerificationClientError', () => {
  it.each(Object.entries(CONTRACT))('%s is answered with status %j', (code, [status, title]) => {
    const error = new VerificationClientError(code as ClientErrorCode);
    expect(CLIENT_ERROR_STATUSES[code as ClientErrorCode]).toBe(status);
    expect(error.getStatus()).toBe(status);
    expect(error.title).toBe(title);
    // Without a detail of its own, the title is the detail (and the message for the host's logs).
    expect(error.message).toBe(title);
    expect(error.toProblem()).toStrictEqual({
      type: `urn:nestjs-phone-verification:error:${code}`,
      title,
      status,
      detail: title,
      error_code: code,
    });
  });

  it('carries its detail and extra fields; `status` stays the integer HTTP status whatever extra holds', () => {
    const error = new VerificationClientError(
      'invalid_code',
      'The code is wrong',
      { attempts_remaining: 2, status: 'oops' },
      undefined,
      { cause: new Error('upstream') },
    );
    expect(error.message).toBe('The code is wrong');
    expect(error.name).toBe('VerificationClientError');
    expect(error.errorCode).toBe('invalid_code');
    expect(error.toProblem()).toStrictEqual({
      type: 'urn:nestjs-phone-verification:error:invalid_code',
      title: 'Invalid code',
      status: 400,
      detail: 'The code is wrong',
      error_code: 'invalid_code',
      attempts_remaining: 2,
    });
    expect(error.toProblem('/verifications/abc')).toMatchObject({
      instance: '/verifications/abc',
      status: 400,
    });
    expect(error.toProblem()).not.toHaveProperty('instance');
    expect(error.cause).toStrictEqual(new Error('upstream'));
  });
});

describe('VerificationError', () => {
  it('renders as a bare 503 service_unavailable: its message and cause never reach the response', () => {
    const error = new VerificationError('store at 10.0.0.5 refused the connection', {
      cause: new Error('ECONNREFUSED'),
    });
    expect(error.getStatus()).toBe(503);
    expect(error.name).toBe('VerificationError');
    expect(error.message).toBe('store at 10.0.0.5 refused the connection');
    expect(error.getResponse()).toStrictEqual({
      type: 'urn:nestjs-phone-verification:error:service_unavailable',
      title: 'Service unavailable',
      status: 503,
      detail: 'Phone verification is temporarily unavailable, try again later',
      error_code: 'service_unavailable',
    });
    // What a host's filter or logger reads off the error itself (PhoneVerificationError's errorCode).
    expect(error.errorCode).toBe('service_unavailable');
  });
});

describe('asVerificationError', () => {
  it('hands a package error on as it is, and anything else as a 503 keeping the original as its cause', () => {
    const refusal = new VerificationClientError('not_found');
    expect(asVerificationError(refusal)).toBe(refusal);
    const base = new VerificationError('x');
    expect(asVerificationError(base)).toBe(base);

    const outage = new Error("redis: READONLY You can't write against a read only replica");
    const wrapped = asVerificationError(outage);
    expect(wrapped).toBeInstanceOf(VerificationClientError);
    expect(wrapped.getStatus()).toBe(503);
    expect(wrapped.cause).toBe(outage);
    expect((wrapped as VerificationClientError).retryAfterSeconds).toBe(5);
    expect(wrapped.message).toBe('Phone verification is temporarily unavailable, try again later');
    expect(wrapped.getResponse()).toStrictEqual({
      type: 'urn:nestjs-phone-verification:error:service_unavailable',
      title: 'Service unavailable',
      status: 503,
      detail: 'Phone verification is temporarily unavailable, try again later',
      error_code: 'service_unavailable',
    });
  });
});
