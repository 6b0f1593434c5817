import { describe, expect, it } from '@jest/globals';
import { HttpException } from '@nestjs/common';
import { PhoneVerificationError } from './phone-verification.error.js';
import { VerificationClientError, VerificationError } from './verification.errors.js';
import { VerificationOptionsError } from './option-rules.js';
import { VerificationApiError, VerificationApiUnavailableError } from '../api/verification-api.error.js';
import { VerificationStoreUnavailableError } from '../store/store-unavailable.error.js';
import { RedisDriverMissingError } from '../store/open-redis-client.js';
import { VerificationListenerError } from '../sessions/verification.tracker.js';
import { ProtectionRefusal } from './refusal-reason.js';

// What a host's `catch (err) { if (err instanceof PhoneVerificationError) … }` sees, for every error the
// package throws on the server side: one root, and each class still tells its own kind apart.
const thrown: ReadonlyArray<[string, Error]> = [
  ['VerificationError', new VerificationError('store down')],
  ['VerificationClientError', new VerificationClientError('not_found')],
  ['ProtectionRefusal', new ProtectionRefusal('start_ip_limit', 60)],
  ['VerificationOptionsError', new VerificationOptionsError('limits', 'is not an object')],
  ['VerificationApiError', new VerificationApiError({ operation: 'initiate', status: 402 })],
  [
    'VerificationApiUnavailableError',
    new VerificationApiUnavailableError({ operation: 'getSession', reason: 'timeout', code: 'ETIMEDOUT' }),
  ],
  ['VerificationStoreUnavailableError', new VerificationStoreUnavailableError('get', 'ECONNREFUSED')],
  ['RedisDriverMissingError', new RedisDriverMissingError(['ioredis', 'redis'])],
  ['VerificationListenerError', new VerificationListenerError('verification.verified', 'req-1')],
];

describe('PhoneVerificationError, the root of the server side', () => {
  it.each(thrown)('%s is a PhoneVerificationError and an Error, named after its class', (name, error) => {
    expect(error).toBeInstanceOf(PhoneVerificationError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(String(error)).toMatch(new RegExp(`^${name}: `));
  });

  it('the rendered line stays an HttpException, the rest never is (a host filter must not render an API 401 as its own)', () => {
    const rendered = thrown.filter(([, error]) => error instanceof HttpException).map(([name]) => name);
    expect(rendered).toEqual(['VerificationError', 'VerificationClientError', 'ProtectionRefusal']);
  });

  it('a subclass answers for its own kind only, not for the HttpException line or its siblings', () => {
    const rendered = new VerificationClientError('not_found');
    expect(rendered).not.toBeInstanceOf(VerificationApiError);
    expect(rendered).not.toBeInstanceOf(VerificationOptionsError);
    expect(new VerificationStoreUnavailableError('get', 'x')).not.toBeInstanceOf(VerificationApiError);
    expect(new VerificationApiError({ operation: 'initiate', status: 500 })).not.toBeInstanceOf(
      VerificationError,
    );
  });

  it('errors of other origins are not the package’s', () => {
    for (const other of [
      new Error('x'),
      new TypeError('x'),
      new HttpException('x', 400),
      null,
      undefined,
      'text',
      {},
    ]) {
      expect(other instanceof PhoneVerificationError).toBe(false);
    }
  });

  it('keeps a cause when given one', () => {
    const cause = new Error('socket');
    expect(new PhoneVerificationError('failed', { cause }).cause).toBe(cause);
  });
});
