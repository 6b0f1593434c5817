/**
 * Unknown option keys are refused at boot however the options object was made: a class instance (a
 * validated config class, `plainToInstance`) or a null-prototype object (`Object.create(null)`, some
 * config loaders), as a literal is; `limit` for `limits` would otherwise boot with the defaults.
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

const refusalOf = (options: unknown): string => {
  try {
    resolveVerificationOptions(options as VerificationModuleOptions);
  } catch (error) {
    return (error as Error).message;
  }
  return 'booted';
};

describe('unknown option keys: the guess and the fields no rule names', () => {
  it('a guess is offered up to half the typed name (at least 2 edits) away, and not one edit further', () => {
    // "maxEntr" is 3 edits from "maxEntries" (7 letters: a guess up to 3); "maxEnt" is 4 from it (6 letters).
    expect(refusalOf({ api, history: { maxEntr: 5 } })).toBe(
      'VerificationModule: option "history.maxEntr" is not an option (did you mean "history.maxEntries"?)',
    );
    expect(refusalOf({ api, history: { maxEnt: 5 } })).toBe(
      'VerificationModule: option "history.maxEnt" is not an option',
    );
  });

  it('a typo in a required key names the key meant, not the required one as missing', () => {
    const { apiSecret, ...rest } = api;
    expect(refusalOf({ api: { ...rest, apiSecrte: apiSecret } })).toBe(
      'VerificationModule: option "api.apiSecrte" is not an option (did you mean "api.apiSecret"?)',
    );
    expect(refusalOf({ api, limits: { spendCap: { amont: 100, windowMs: 86_400_000 } } })).toBe(
      'VerificationModule: option "limits.spendCap.amont" is not an option (did you mean "limits.spendCap.amount"?)',
    );
  });

  it("fields checked where they are used (a request hook, the cap's currency) boot", () => {
    const options = {
      api: { ...api, onRequest: () => undefined },
      limits: { spendCap: { amount: 100, windowMs: 86_400_000, currency: 'RUB' } },
    };
    expect(refusalOf(options)).toBe('booted');
  });

  it("a list given for a group is refused by the group's own rule, not read key by key", () => {
    expect(refusalOf({ api, history: [{ maxEntris: 5 }] })).toBe(
      'VerificationModule: option "history" must be { retentionDays?, maxEntries? } or false',
    );
  });
});
