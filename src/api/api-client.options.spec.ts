/**
 * The standalone client's options (`new VerificationApiClient(options)`), the second shape of the module's
 * `api` group: refused at construction naming the field, never echoing a key, a secret or a URL's
 * password; the base address kept without its trailing slashes.
 */
import { describe, expect, it } from '@jest/globals';
import { longestCallMs, resolveApiClientOptions, withApiClientDefaults } from './api-client.options.js';
import type { VerificationApiClientOptions } from './api-client.options.js';

const valid = { baseUrl: 'https://api.example.test', apiKey: 'key-123', apiSecret: 'secret-secret-secret' };

const refusal = (options: unknown): string => {
  try {
    resolveApiClientOptions(options as VerificationApiClientOptions);
  } catch (error) {
    return (error as Error).message;
  }
  return 'accepted';
};

describe('the standalone API client refuses bad options at construction, naming the field', () => {
  it.each([
    ['no options object', null, '"(root)" must be { baseUrl, apiKey, apiSecret, … }'],
    ['no options at all', undefined, '"(root)" must be { baseUrl, apiKey, apiSecret, … }'],
    ['a list', [], '"(root)" must be { baseUrl, apiKey, apiSecret, … }'],
    ['no baseUrl', { ...valid, baseUrl: undefined }, '"baseUrl"'],
    ['a relative baseUrl', { ...valid, baseUrl: '/v1' }, '"baseUrl" must be an absolute http(s) URL'],
    [
      'an ftp baseUrl',
      { ...valid, baseUrl: 'ftp://api.example.test' },
      '"baseUrl" must be an absolute http(s) URL',
    ],
    [
      'a user in the URL',
      { ...valid, baseUrl: 'https://me@api.example.test' },
      '"baseUrl" must not contain credentials',
    ],
    [
      'a password alone in the URL',
      { ...valid, baseUrl: 'https://:pw-9@api.example.test' },
      '"baseUrl" must not contain credentials',
    ],
    ['no apiKey', { ...valid, apiKey: undefined }, '"apiKey"'],
    ['an empty apiKey', { ...valid, apiKey: '' }, '"apiKey"'],
    ['no apiSecret', { ...valid, apiSecret: undefined }, '"apiSecret"'],
    ['a timeout of 0', { ...valid, timeoutMs: 0 }, '"timeoutMs"'],
    ['negative retries', { ...valid, maxRetries: -1 }, '"maxRetries"'],
    ['a retry deadline of 0', { ...valid, retryDeadlineMs: 0 }, '"retryDeadlineMs"'],
    ['a negative Retry-After ceiling', { ...valid, maxRetryAfterMs: -1 }, '"maxRetryAfterMs"'],
    ['an unknown transport', { ...valid, transport: 'fetch' }, '"transport"'],
    ['a request hook that is not a function', { ...valid, onRequest: 'log' }, '"onRequest"'],
  ])('%s', (_name, options, words) => {
    const message = refusal(options);
    expect(message.startsWith('VerificationApiClient: option ')).toBe(true);
    expect(message).toContain(words);
    expect(message).not.toContain('pw-9');
    expect(message).not.toContain('secret-secret');
  });

  it('good options pass, their defaults applied, the base address without its trailing slashes', () => {
    const resolved = resolveApiClientOptions({
      ...valid,
      baseUrl: 'http://127.0.0.1:9//',
      maxRetryAfterMs: 0,
    });
    expect(resolved.baseUrl).toBe('http://127.0.0.1:9');
    expect(resolved.maxRetryAfterMs).toBe(0);
    expect(resolveApiClientOptions({ ...valid, baseUrl: 'https://api.example.test/root/' }).baseUrl).toBe(
      'https://api.example.test/root',
    );
  });

  it('options the module resolved are taken as they are, not checked again', () => {
    const resolved = withApiClientDefaults(valid);
    expect(resolveApiClientOptions(resolved)).toBe(resolved);
    expect(resolveApiClientOptions({ ...resolved })).not.toBe(resolved);
  });
});

describe('longestCallMs: how long one call may last, retries included (what a lease guarding it outlasts)', () => {
  const resolved = (options: Partial<VerificationApiClientOptions> = {}) =>
    withApiClientDefaults({ ...valid, ...options });
  it.each([
    ['the defaults: a GET within its 10 s deadline', resolved(), 'GET', 10_000],
    [
      'the defaults: a POST retried after a refusal may begin 10 s in and take 5 s',
      resolved(),
      'POST',
      15_000,
    ],
    ['no retries: a POST is one attempt, its timeout', resolved({ maxRetries: 0 }), 'POST', 5_000],
    [
      'a timeout past the deadline: a GET is cut at the deadline',
      resolved({ timeoutMs: 20_000, retryDeadlineMs: 10_000 }),
      'GET',
      10_000,
    ],
    [
      'a timeout past the deadline: a POST keeps its whole timeout after it',
      resolved({ timeoutMs: 20_000, retryDeadlineMs: 10_000 }),
      'POST',
      30_000,
    ],
  ] as const)('%s', (_, api, method, ms) => {
    expect(longestCallMs(api, method)).toBe(ms);
  });
});
