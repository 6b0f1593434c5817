/**
 * How one exchange with the API reads, for every shape of answer the transports hand over: a value, a
 * definite refusal (a problem document, a bare 429) or an unavailability with its reason and a detail safe
 * to log; and a thrown transport error as an unavailability carrying a well-formed low-level code only.
 */
import { describe, expect, it } from '@jest/globals';
import { errorLabel, readResponse, unavailableFromThrown, type Call } from './api-response.reader.js';
import { VerificationApiError, VerificationApiUnavailableError } from './verification-api.error.js';
import { WireFormatError } from './wire-format.error.js';

const call: Call<string> = {
  operation: 'getSession',
  method: 'GET',
  route: '/v1/verify/:id',
  path: '/v1/verify/x',
  map: (body) => {
    const id = (body as { request_id?: unknown }).request_id;
    if (typeof id !== 'string') throw new WireFormatError('session: missing "request_id"');
    if (id === 'boom') throw new Error('secret-bearing mapper failure');
    return id;
  },
};
const JSON_TYPE = { 'content-type': 'application/json' };
const answer = (status: number, body: string, headers: Record<string, string> = JSON_TYPE) =>
  readResponse(call, { status, headers, body });
const failure = (outcome: ReturnType<typeof answer>) => {
  if (outcome.ok) throw new Error('expected a failure');
  return outcome.error;
};

describe('an answer of the API', () => {
  it('a 2xx JSON body is mapped to the value; 299 is a 2xx, 300 is not', () => {
    expect(answer(200, '{"request_id":"r1"}')).toStrictEqual({ ok: true, status: 200, value: 'r1' });
    expect(answer(299, ' {"request_id":"r2"} ')).toStrictEqual({ ok: true, status: 299, value: 'r2' });
    const redirect = failure(answer(300, '{"request_id":"r3"}'));
    expect(redirect).toBeInstanceOf(VerificationApiError);
  });

  it.each([
    ['an HTML page', 200, '<html>{"request_id":"r1"}</html>', { 'content-type': 'text/HTML' }, 'HTML body'],
    [
      'JSON sent as HTML',
      200,
      '{"request_id":"r1"}',
      { 'content-type': 'text/html; charset=utf-8' },
      'HTML body',
    ],
    ['an empty body', 201, '  ', JSON_TYPE, 'body is not JSON'],
    ['a body that is not JSON', 200, 'OK', JSON_TYPE, 'body is not JSON'],
    ['a body missing its identity', 200, '{}', JSON_TYPE, 'session: missing "request_id"'],
    ['a body the mapper cannot read', 200, '{"request_id":"boom"}', JSON_TYPE, 'unreadable body'],
  ])('a 2xx with %s is a bad response, its detail safe to log', (_name, status, body, headers, detail) => {
    const error = failure(answer(status, body, headers));
    expect(error).toBeInstanceOf(VerificationApiUnavailableError);
    expect(error).toMatchObject({ reason: 'bad_response', status });
    expect(error.message).toContain(detail);
    expect(error.message).not.toContain('secret-bearing');
  });

  it('a problem document is a definite refusal with its code and Retry-After; a bare 429 too', () => {
    const refused = failure(
      answer(402, '{"error_code":"INSUFFICIENT_FUNDS","title":"No money"}', {
        ...JSON_TYPE,
        'retry-after': '3',
      }),
    );
    expect(refused).toBeInstanceOf(VerificationApiError);
    expect(refused).toMatchObject({ status: 402, errorCode: 'INSUFFICIENT_FUNDS', retryAfterMs: 3000 });
    expect(errorLabel(refused)).toBe('INSUFFICIENT_FUNDS');
    const limited = failure(answer(429, '', { 'retry-after': '2' }));
    expect(limited).toBeInstanceOf(VerificationApiError);
    expect(limited).toMatchObject({ status: 429, errorCode: undefined, retryAfterMs: 2000 });
    expect(errorLabel(limited)).toBe('http_429');
  });

  it.each([
    ['a bodiless 403', 403, '', 'forbidden', undefined],
    ['a 403 with a page', 403, 'Forbidden', 'bad_response', 'body is not a problem document'],
    ['an empty 500', 500, ' ', 'bad_response', 'empty body'],
    ['a 502 page', 502, 'Bad Gateway', 'bad_response', 'body is not a problem document'],
    [
      'a 500 whose JSON is sent as HTML',
      500,
      '{"error_code":"X"}',
      'bad_response',
      'body is not a problem document',
    ],
  ])('%s is no usable answer', (name, status, body, reason, detail) => {
    const headers: Record<string, string> = name.includes('HTML') ? { 'content-type': 'text/html' } : {};
    const error = failure(answer(status, body, headers));
    expect(error).toBeInstanceOf(VerificationApiUnavailableError);
    expect(error).toMatchObject({ reason, status });
    expect(errorLabel(error)).toBe(reason);
    if (detail === undefined)
      expect(error.message).toBe('Verification API getSession: no usable answer (forbidden, HTTP 403)');
    else expect(error.message).toContain(detail);
  });
});

describe('a transport error thrown', () => {
  it.each([
    [{ code: 'ETIMEDOUT' }, 'timeout', 'ETIMEDOUT'],
    [{ code: 'ERR_BODY_TOO_LARGE' }, 'bad_response', 'ERR_BODY_TOO_LARGE'],
    [{ code: 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED' }, 'bad_response', 'ERR_FR_MAX_BODY_LENGTH_EXCEEDED'],
    [{ code: 'ERR_BAD_RESPONSE' }, 'bad_response', 'ERR_BAD_RESPONSE'],
    [{ code: 'ECONNRESET' }, 'network', 'ECONNRESET'],
    // Only a well-formed code travels: not text a server or a proxy could have put there.
    [{ code: 'https://user:pw@host' }, 'network', undefined],
    [{ code: 'x ECONNRESET' }, 'network', undefined],
    [{ code: 'ECONNRESET x' }, 'network', undefined],
    [{ code: 'E'.repeat(41) }, 'network', undefined],
    [{ code: 42 }, 'network', undefined],
    [new Error('no code'), 'network', undefined],
  ])('%j: %s', (thrown, reason, code) => {
    const error = unavailableFromThrown('initiate', thrown);
    expect(error).toMatchObject({ reason, code });
    expect(error.message).not.toContain('pw@');
  });

  it('a code of exactly 40 characters travels', () => {
    expect(unavailableFromThrown('initiate', { code: 'E'.repeat(40) }).code).toBe('E'.repeat(40));
  });
});
