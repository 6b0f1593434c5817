import { describe, expect, it } from '@jest/globals';
import { api } from '../../test/support/option-refusals.js';
import {
  declaredAsyncRoutes,
  declaredRoutes,
  optionWarnings,
  resolveVerificationOptions,
} from './verification-options.resolver.js';
import type { VerificationModuleOptions } from './verification.options.js';

/*
 * What the resolver makes of each shape an option takes: absent, `false` and an object for the
 * features that are off until given; origins as browsers send them; methods as given or the account's;
 * the registration's name in the routes declared at import; the warning about test numbers.
 */
const resolve = (extra: Partial<VerificationModuleOptions>) => resolveVerificationOptions({ api, ...extra });

describe('resolveVerificationOptions: the shapes of an option', () => {
  it.each([
    ['history', { retentionDays: 30, maxEntries: 100 }],
    ['ledger', { tolerance: 1, retentionDays: 35, maxRowsPerDay: 2000 }],
  ] as const)('%s: off when absent or false; an object is laid over its defaults', (feature, defaults) => {
    const of = (value: unknown) => resolve({ [feature]: value })[feature];
    expect([of(undefined), of(false)]).toEqual([false, false]);
    expect(of({})).toEqual(defaults);
    expect(of({ retentionDays: 7 })).toEqual({ ...defaults, retentionDays: 7 });
  });

  it('allowed origins are kept as browsers send them in Origin: lowercase, no trailing slash', () => {
    expect(
      resolve({ routes: { allowedOrigins: ['https://Shop.Example/', 'http://localhost:5173'] } }).routes
        .allowedOrigins,
    ).toEqual(['https://shop.example', 'http://localhost:5173']);
  });

  it("methods given are the host's, once each; absent, the account's (read from its prices)", () => {
    const given = resolve({ methods: ['sms', 'flash_call', 'sms'] });
    expect([given.methods, given.methodsFromAccount]).toEqual([['sms', 'flash_call'], false]);
    expect(resolve({}).methodsFromAccount).toBe(true);
  });
});

describe('the routes declared at import carry the registration name', () => {
  it('forRoot and forRootAsync alike; without a name, none', () => {
    expect(declaredRoutes({ api, name: 'billing' }).name).toBe('billing');
    expect(declaredAsyncRoutes(undefined, undefined, 'billing').name).toBe('billing');
    expect('name' in declaredRoutes({ api })).toBe(false);
    expect('name' in declaredAsyncRoutes(undefined, undefined)).toBe(false);
    expect('name' in declaredRoutes({ api, name: 7 } as never)).toBe(false);
  });
});

describe('optionWarnings: test numbers', () => {
  const numbers = [{ phoneNumber: '+79990000001', code: '1234' }];

  it('says whether any owner may use them, or how many owners', () => {
    const open = optionWarnings(resolve({ testNumbers: { numbers } }));
    expect(open).toEqual([
      'option "testNumbers": 1 test number(s) enabled, answered with a fixed code and never sent to the API (any owner may use them: set testNumbers.owners to restrict them)',
    ]);
    const closed = optionWarnings(
      resolve({ testNumbers: { numbers, owners: ['a', 'b'] }, owner: () => 'a' }),
    );
    expect(closed).toEqual([
      'option "testNumbers": 1 test number(s) enabled, answered with a fixed code and never sent to the API (for 2 owner(s))',
    ]);
  });
});
