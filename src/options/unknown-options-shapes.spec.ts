/**
 * Attack (lane attack-44): unknown option keys are refused at boot only in plain objects. Options
 * built as a class instance (a validated config class, `plainToInstance`) or a null-prototype object
 * (`Object.create(null)`, some config loaders) are not looked into: `limit` for `limits` boots
 * silently with the defaults, the very shape issue 44 asked to refuse "in forRootAsync, where no type
 * catches it". (Sections with their own key check, as `testNumbers`, refuse a class instance's typo.)
 *
 * Low. FAILS ON PURPOSE on the current code.
 */
import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from './verification-options.resolver.js';
import type { VerificationModuleOptions } from './verification.options.js';

const api = { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' };

class HostConfig {
  api = api;
  limit = { startPerIp: { points: 1, windowMs: 1000 } };
}

describe('unknown option keys in other object shapes', () => {
  it.each([
    ['a class instance at the top', () => new HostConfig(), /"limit".*"limits"/],
    [
      'a null-prototype object at the top',
      () => Object.assign(Object.create(null) as object, { api, limit: {} }),
      /"limit".*"limits"/,
    ],
  ])('%s: the typo is refused at boot, naming the nearest key', (_, options, message) => {
    expect(() => resolveVerificationOptions(options() as unknown as VerificationModuleOptions)).toThrow(
      message,
    );
  });
});
