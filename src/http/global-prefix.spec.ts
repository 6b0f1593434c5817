/**
 * Where the client routes are served, as the browser's cookie and the logs name them: the app's global
 * prefix read from Nest's container (slashes trimmed, '' when none or unreadable). The matched route and
 * a cookie's literal path are literal-prefix.spec's.
 */
import { describe, expect, it } from '@jest/globals';
import type { ModuleRef } from '@nestjs/core';
import { globalPrefix, servedPath } from './global-prefix.js';

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
