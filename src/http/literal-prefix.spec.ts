import { describe, expect, it } from '@jest/globals';
import { literalPrefix, matchedRoute } from './global-prefix.js';

describe('literalPrefix: a cookie Path a request path can match', () => {
  it.each([
    ['/verification', '/verification'],
    ['/v1/verification', '/v1/verification'],
    ['/api/:tenant/verification', '/api'],
    ['/:tenant/verification', '/'],
    ['/api/*splat/verification', '/api'],
    ['/api{/:tenant}/verification', '/'],
    ['/', '/'],
  ])('%s → %s', (path, expected) => {
    expect(literalPrefix(path)).toBe(expected);
  });
});

describe('matchedRoute: the declared path a request matched', () => {
  it.each([
    [
      'Express, mounted under a base URL',
      { baseUrl: '/api', route: { path: '/v1/verification/start' } },
      '/api/v1/verification/start',
    ],
    [
      'Express, on the app itself',
      { baseUrl: '', route: { path: '/verification/start' } },
      '/verification/start',
    ],
    ['Fastify', { routeOptions: { url: '/v2/verification/start' } }, '/v2/verification/start'],
    ['a route without a base URL', { route: { path: '/verification/start' } }, '/verification/start'],
    ['neither says', { url: '/verification/start/' }, undefined],
    ['no request', undefined, undefined],
  ])('%s', (_, request, expected) => {
    expect(matchedRoute(request)).toBe(expected);
  });
});
