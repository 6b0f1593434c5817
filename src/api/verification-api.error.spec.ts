/**
 * Whether a failed POST may have reached the API (a start is then never retried, its session awaited as in
 * doubt), and the operator's one-line description of a failure: each kind of failure, both ways.
 */
import { describe, expect, it } from '@jest/globals';
import {
  describeUpstreamError,
  mayHaveBeenProcessed,
  VerificationApiError,
  VerificationApiUnavailableError,
} from './verification-api.error.js';
import type { ProblemWire } from './api.wire.js';

const unavailable = (reason: 'timeout' | 'network' | 'bad_response' | 'forbidden', code?: string) =>
  new VerificationApiUnavailableError({ operation: 'initiate', reason, ...(code ? { code } : {}) });

describe('a failed POST that may have been processed', () => {
  it.each([
    [
      'a problem document (never charged, as the spec says)',
      new VerificationApiError({
        operation: 'initiate',
        status: 402,
        problem: { error_code: 'INSUFFICIENT_FUNDS' },
      }),
      false,
    ],
    ['a bodiless 403', unavailable('forbidden'), false],
    ['a refused connection (nothing sent)', unavailable('network', 'ECONNREFUSED'), false],
    ['a reset connection', unavailable('network', 'ECONNRESET'), true],
    ['a time-out', unavailable('timeout', 'ETIMEDOUT'), true],
    ['an unreadable answer', unavailable('bad_response'), true],
    ['an error of another kind', new Error('socket hang up'), true],
  ])('%s: %s', (_name, error, may) => {
    expect(mayHaveBeenProcessed(error)).toBe(may);
  });
});

describe("the operator's description of an upstream failure", () => {
  it('an answer names the operation, its status and error code; no answer its reason and low-level code', () => {
    expect(
      describeUpstreamError(
        new VerificationApiError({ operation: 'check', status: 409, problem: { error_code: 'NOT_PENDING' } }),
      ),
    ).toBe('upstream check answered 409 NOT_PENDING');
    expect(describeUpstreamError(new VerificationApiError({ operation: 'getSession', status: 401 }))).toBe(
      'upstream getSession answered 401',
    );
    expect(describeUpstreamError(unavailable('network', 'ECONNRESET'))).toBe(
      'upstream initiate unavailable (network ECONNRESET)',
    );
    expect(describeUpstreamError(unavailable('timeout'))).toBe('upstream initiate unavailable (timeout)');
    expect(describeUpstreamError(new Error('socket hang up'))).toBe('Error: socket hang up');
    expect(describeUpstreamError(undefined)).toBe('unknown error');
    expect(describeUpstreamError(null)).toBe('unknown error');
  });
});

describe('an answer of the API as the error a host catches', () => {
  it('its message names the operation and status, and the error code only when the problem has one', () => {
    expect(new VerificationApiError({ operation: 'getSession', status: 401 }).message).toBe(
      'Verification API getSession failed: HTTP 401',
    );
    const refused = new VerificationApiError({
      operation: 'check',
      status: 409,
      problem: { error_code: 'NOT_PENDING', attempts_remaining: 2 },
    });
    expect(refused.message).toBe('Verification API check failed: HTTP 409 NOT_PENDING');
    expect(refused.attemptsRemaining).toBe(2);
  });

  it('attempts remaining are read only from a number, never from a string the API sent', () => {
    // The wire type says number; the document is the API's JSON, whatever it holds.
    const problem = JSON.parse('{"error_code":"INVALID_CODE","attempts_remaining":"3"}') as ProblemWire;
    const error = new VerificationApiError({ operation: 'check', status: 400, problem });
    expect(error.attemptsRemaining).toBeUndefined();
  });
});
