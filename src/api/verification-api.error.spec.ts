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
    expect(describeUpstreamError(undefined)).toBe('unknown error');
    expect(describeUpstreamError(null)).toBe('unknown error');
  });
});
