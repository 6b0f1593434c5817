/**
 * An option the module does not have (`limit` for `limits`, a typo in a nested group) fails the boot
 * naming it and the nearest known name, under forRoot and forRootAsync alike (where no type catches
 * it). That every field of the option types is known: test/docs/option-rules-known.
 */
import { describe, expect, it } from '@jest/globals';
import { Test } from '@nestjs/testing';
import { VerificationModule } from '../../src/module/verification.module.js';
import { VERIFICATION_OPTION_RULES } from '../../src/options/verification-options.rules.js';
import { checkKnownKeys } from '../../src/options/unknown-options.js';
import { api, refusal } from '../support/option-refusals.js';

describe('unknown option keys', () => {
  it.each([
    [{ limit: { enabled: false } }, 'limit', '(did you mean "limits"?)'],
    [{ limits: { startPerPhon: { points: 3 } } }, 'limits.startPerPhon', '"limits.startPerPhone"'],
    [{ limits: { pumping: { windowMS: 1000 } } }, 'limits.pumping.windowMS', '"limits.pumping.windowMs"'],
    [{ api: { ...api, apikey: 'x' } }, 'api.apikey', '"api.apiKey"'],
    [{ history: { maxEntry: 5 } }, 'history.maxEntry', '"history.maxEntries"'],
    [{ webhooks: { secrets: 'whsec_c2VjcmV0' } }, 'webhooks.secrets', '"webhooks.secret"'],
    [
      { testNumbers: { numbers: [{ phoneNumber: '+79990000000', code: '123456', outcom: 'failed' }] } },
      'testNumbers.numbers[0].outcom',
      '"testNumbers.numbers[].outcome"',
    ],
    [{ zzzzzzzz: 1 }, 'zzzzzzzz', 'is not an option'],
  ])('%j is refused, naming %s and the nearest known name', (extra, field, words) => {
    const error = refusal({ api, ...extra });
    expect(error.field).toBe(field);
    expect(error.message).toContain(`option "${field}" is not an option`);
    expect(error.message).toContain(words);
  });

  it('a name far from every known one is refused without a guess', () => {
    expect(refusal({ api, zzzzzzzz: 1 }).message).not.toContain('did you mean');
  });

  it('objects the rules do not describe (a store instance, a logger, a registry) are not looked into', () => {
    const logger = { log() {}, error() {}, warn() {}, extra: 1 };
    expect(() => checkKnownKeys(VERIFICATION_OPTION_RULES, { api, logger })).not.toThrow();
    class Store {
      anything = 1;
    }
    expect(() => checkKnownKeys(VERIFICATION_OPTION_RULES, { api, store: new Store() })).not.toThrow();
  });

  it('forRootAsync: a factory that returns an unknown key fails the boot naming it', async () => {
    const module = Test.createTestingModule({
      imports: [
        VerificationModule.forRootAsync({
          useFactory: () => ({ api, limit: { enabled: false } }) as never,
        }),
      ],
    });
    await expect(module.compile()).rejects.toThrow(
      'option "limit" is not an option (did you mean "limits"?)',
    );
  });
});
