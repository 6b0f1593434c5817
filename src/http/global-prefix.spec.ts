/**
 * Where the client routes are served, as the browser's cookie and the logs name them: the app's global
 * prefix read from Nest's container (slashes trimmed, '' when none or unreadable), the route a request
 * matched on Express and on Fastify, and the literal part of a path a cookie's `Path` can hold.
 */
import { describe, expect, it } from '@jest/globals';
import type { ModuleRef } from '@nestjs/core';
import { globalPrefix, literalPrefix, matchedRoute, servedPath } from './global-prefix.js';

const withPrefix = (prefix: unknown) =>
  ({ container: { applicationConfig: { getGlobalPrefix: () => prefix } } }) as unknown as ModuleRef;

describe('globalPrefix and servedPath', () => {
  it.each([
    ['api', 'api', '/api/verification'],
    ['/api/', 'api', '/api/verification'],
    ['//v1/api//', 'v1/api', '/v1/api/verification'],
    ['', '', '/verification'],
    [undefined, '', '/verification'],
  ])('a global prefix of %j: %j, the routes at %s', (prefix, read, served) => {
    expect(globalPrefix(withPrefix(prefix))).toBe(read);
    expect(servedPath(withPrefix(prefix), 'verification')).toBe(served);
  });

  it('no ModuleRef, or a container that throws: no prefix', () => {
    expect(globalPrefix(undefined)).toBe('');
    const throwing = {
      container: {
        applicationConfig: {
          getGlobalPrefix: () => {
            throw new Error('not ready');
          },
        },
      },
    } as unknown as ModuleRef;
    expect(globalPrefix(throwing)).toBe('');
    expect(servedPath(undefined, '')).toBe('/');
  });
});

describe('matchedRoute', () => {
  it("Fastify's declared url, else Express's base URL and route path", () => {
    expect(matchedRoute({ routeOptions: { url: '/api/verification/start' } })).toBe(
      '/api/verification/start',
    );
    expect(matchedRoute({ baseUrl: '/api', route: { path: '/verification/start' } })).toBe(
      '/api/verification/start',
    );
    expect(matchedRoute({ route: { path: '/verification/start' } })).toBe('/verification/start');
    expect(matchedRoute({ url: '/verification/start' })).toBeUndefined();
    expect(matchedRoute(undefined)).toBeUndefined();
  });
});

describe('literalPrefix', () => {
  it.each([
    ['/api/verification', '/api/verification'],
    ['/api/:tenant/verification', '/api'],
    ['/:tenant/verification', '/'],
    ['/files/*/verification', '/files'],
    ['/api/v{1}/verification', '/api'],
    ['/api/(v1)?/verification', '/api'],
    ['/', '/'],
  ])('%s: %s', (path, prefix) => {
    expect(literalPrefix(path)).toBe(prefix);
  });
});
