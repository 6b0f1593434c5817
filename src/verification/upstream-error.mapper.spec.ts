import { describe, expect, it } from '@jest/globals';
import type { VerificationBalanceWatch } from '../account/balance-watch.service.js';
import type { ApiOperation } from '../api/api-client.options.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { apiSaidWrongCode, toClientError, upstreamClientError } from './upstream-error.mapper.js';

/*
 * What a frontend sees of an upstream failure: 404 not_found to a call about one session (a 503 to any other), 429 with a Retry-After in whole seconds
 * never shorter than the API's wait (at the second's bound, one ms either side), anything else a 503
 * with Retry-After 30; and whether a failed check counts as a wrong code the API named.
 */

const apiError = (
  status: number,
  retryAfterMs?: number,
  errorCode?: string,
  operation: ApiOperation = 'initiate',
) =>
  new VerificationApiError({
    operation,
    status,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(errorCode === undefined ? {} : { problem: { error_code: errorCode } }),
  });
const seen = (e: VerificationClientError) => ({
  status: e.getStatus(),
  error_code: e.errorCode,
  retry_after: e.retryAfterSeconds,
});

describe('toClientError', () => {
  it('404 to a call about one session is not_found; a refusal of the module passes as it is', () => {
    for (const operation of ['getSession', 'check'] as const)
      expect(seen(toClientError(apiError(404, undefined, 'not_found', operation)))).toStrictEqual({
        status: 404,
        error_code: 'not_found',
        retry_after: undefined,
      });
    const own = new VerificationClientError('invalid_code');
    expect(toClientError(own)).toBe(own);
  });

  it('429: Retry-After rounds the API’s wait up to whole seconds, at least 1', () => {
    const after = (ms?: number) => seen(toClientError(apiError(429, ms)));
    expect(after(2000)).toStrictEqual({ status: 429, error_code: 'rate_limit_exceeded', retry_after: 2 });
    expect(toClientError(apiError(429, 2000)).detail).toBe('Too many requests, try again later');
    expect(after(1999).retry_after).toBe(2);
    expect(after(2001).retry_after).toBe(3);
    expect(after(1000).retry_after).toBe(1);
    expect(after(0).retry_after).toBe(1);
    expect(after(undefined).retry_after).toBe(1);
  });

  it('401, 402, 403, a 404 not about one session, 5xx and anything not from the API: 503 service_unavailable, Retry-After 30', () => {
    expect(toClientError(apiError(500)).detail).toBe(
      'Phone verification is temporarily unavailable, try again later',
    );
    for (const error of [
      apiError(401),
      apiError(402),
      apiError(403),
      apiError(500),
      // A 404 to a start (or a switch's) or to any call not about one session: a wrong api.baseUrl.
      apiError(404, undefined, 'not_found'),
      apiError(404, undefined, undefined, 'getPrices'),
      apiError(404, undefined, undefined, 'getBalance'),
      apiError(404, undefined, undefined, 'getUsage'),
      new Error('socket'),
      'garbage',
    ])
      expect(seen(toClientError(error))).toStrictEqual({
        status: 503,
        error_code: 'service_unavailable',
        retry_after: 30,
      });
  });
});

describe('upstreamClientError', () => {
  it('lets the balance watch see the failure first', async () => {
    const noted: unknown[] = [];
    const balance = {
      noteUpstreamFailure: (e: unknown) => {
        noted.push(e);
        return Promise.resolve();
      },
    } as unknown as VerificationBalanceWatch;
    const error = apiError(402);
    expect(seen(await upstreamClientError(error, balance)).error_code).toBe('service_unavailable');
    expect(noted).toStrictEqual([error]);
  });
});

describe('apiSaidWrongCode', () => {
  it('only an API invalid_code answered as invalid_code', () => {
    const wrong = new VerificationClientError('invalid_code');
    expect(apiSaidWrongCode(apiError(400, undefined, 'invalid_code'), wrong)).toBe(true);
    expect(
      apiSaidWrongCode(apiError(400, undefined, 'invalid_code'), new VerificationClientError('not_pending')),
    ).toBe(false);
    expect(apiSaidWrongCode(apiError(400, undefined, 'validation_error'), wrong)).toBe(false);
    expect(apiSaidWrongCode(new Error('invalid_code'), wrong)).toBe(false);
  });
});
