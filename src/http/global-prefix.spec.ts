/**
 * Where the client routes are served, as the browser's cookie and the logs name them: the app's global
 * prefix read from Nest's container (slashes trimmed, '' when none or unreadable). The matched route and
 * a cookie's literal path are literal-prefix.spec's.
 */
import { describe, expect, it } from '@jest/globals';
import { VERSION_NEUTRAL, VersioningType } from '@nestjs/common';
import type { ModuleRef } from '@nestjs/core';
import { globalPrefix, servedPath, uriVersion } from './global-prefix.js';

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

/** An app with the global prefix `api` and `versioning` (what `app.enableVersioning(...)` keeps). */
const versioned = (versioning: unknown) =>
  ({
    container: { applicationConfig: { getGlobalPrefix: () => 'api', getVersioning: () => versioning } },
  }) as unknown as ModuleRef;

describe('uriVersion: where Nest puts a route of the module under the app versioning', () => {
  it.each([
    ['URI, default version 1', { type: VersioningType.URI, defaultVersion: '1' }, '/api/v1/verification'],
    [
      'its own prefix',
      { type: VersioningType.URI, defaultVersion: '2', prefix: 'ver' },
      '/api/ver2/verification',
    ],
    ['no prefix', { type: VersioningType.URI, defaultVersion: '3', prefix: false }, '/api/3/verification'],
    [
      'several versions: the first',
      { type: VersioningType.URI, defaultVersion: ['2', '1'] },
      '/api/v2/verification',
    ],
    [
      'version-neutral by default',
      { type: VersioningType.URI, defaultVersion: VERSION_NEUTRAL },
      '/api/verification',
    ],
    ['URI without a default version', { type: VersioningType.URI }, '/api/verification'],
    [
      'header versioning',
      { type: VersioningType.HEADER, header: 'v', defaultVersion: '1' },
      '/api/verification',
    ],
    ['none', undefined, '/api/verification'],
    ['a number (a plain-JS host)', { type: VersioningType.URI, defaultVersion: 1 }, '/api/v1/verification'],
  ])('%s: %s', (_, versioning, served) => {
    expect(servedPath(versioned(versioning), 'verification')).toBe(served);
  });

  it('a container that throws, or none: no version', () => {
    const throwing = {
      container: {
        applicationConfig: {
          getVersioning: () => {
            throw new Error('not ready');
          },
        },
      },
    } as unknown as ModuleRef;
    expect(uriVersion(throwing)).toBe('');
    expect(uriVersion(undefined)).toBe('');
  });
});
