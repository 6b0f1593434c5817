import { describe, expect, it } from '@jest/globals';
import { api, refusal } from '../../test/support/option-refusals.js';
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
    expect([of(undefined), of(false)]).toStrictEqual([false, false]);
    expect(of({})).toStrictEqual(defaults);
    expect(of({ retentionDays: 7 })).toStrictEqual({ ...defaults, retentionDays: 7 });
  });

  it('allowed origins are kept as browsers send them in Origin: lowercase, no trailing slash', () => {
    expect(
      resolve({ routes: { allowedOrigins: ['https://Shop.Example/', 'http://localhost:5173'] } }).routes
        .allowedOrigins,
    ).toStrictEqual(['https://shop.example', 'http://localhost:5173']);
  });

  it("methods given are the host's, once each; absent, the account's (read from its prices)", () => {
    const given = resolve({ methods: ['sms', 'flash_call', 'sms'] });
    expect([given.methods, given.methodsFromAccount]).toStrictEqual([['sms', 'flash_call'], false]);
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
    expect(open).toStrictEqual([
      'option "testNumbers": 1 test number(s) enabled, answered with a fixed code and never sent to the API (any owner may use them: set testNumbers.owners to restrict them)',
    ]);
    const closed = optionWarnings(
      resolve({ testNumbers: { numbers, owners: ['a', 'b'] }, owner: () => 'a' }),
    );
    expect(closed).toStrictEqual([
      'option "testNumbers": 1 test number(s) enabled, answered with a fixed code and never sent to the API (for 2 owner(s))',
    ]);
  });
});

describe('resolveVerificationOptions: what each group keeps of what it was given', () => {
  it('verified-phone headers are kept lowercase, as both platforms hand them', () => {
    const { verifiedPhone } = resolve({
      verifiedPhone: { header: 'X-Verification-Id', claimHeader: 'X-Phone-Claim' },
    });
    expect([verifiedPhone.header, verifiedPhone.claimHeader]).toStrictEqual([
      'x-verification-id',
      'x-phone-claim',
    ]);
  });

  it('test numbers keep their code or outcome, and no key that was not given; their limits as given', () => {
    const { testNumbers } = resolve({
      testNumbers: {
        numbers: [
          { phoneNumber: '+79990000001', code: '1234' },
          { phoneNumber: '+79990000002', outcome: 'expired' },
        ],
        maxAttempts: 5,
        wrongCodesPerNumber: { points: 4, windowMs: 60_000 },
      },
    });
    expect(testNumbers.numbers).toStrictEqual([
      { phoneNumber: '+79990000001', code: '1234' },
      { phoneNumber: '+79990000002', outcome: 'expired' },
    ]);
    expect([testNumbers.maxAttempts, testNumbers.wrongCodesPerNumber]).toStrictEqual([
      5,
      { points: 4, windowMs: 60_000 },
    ]);
  });

  it('the pumping safe list, the device exclusions and the timeouts keep what was given; the rest its defaults', () => {
    const r = resolve({
      limits: { pumping: { safeList: { numbers: ['+79161234567'], ranges: ['+7916123'] } } },
      orchestration: {
        exclude: { desktop: ['flash_call'] },
        timeoutSeconds: { sms: 20, flash_call: undefined },
      },
    });
    const safe = r.limits.pumping && r.limits.pumping.safeList;
    expect([safe && safe.numbers, safe && safe.ranges]).toStrictEqual([['+79161234567'], ['+7916123']]);
    expect(r.orchestration.exclude).toStrictEqual({ mobile: [], desktop: ['flash_call'] });
    expect([r.orchestration.timeoutSeconds.sms, r.orchestration.timeoutSeconds.flash_call]).toStrictEqual([
      20, 30,
    ]);
  });

  it('a spend cap switched off stays off; a purpose without its own start limit has none', () => {
    const r = resolve({ limits: { spendCap: false }, purposes: { payout: { methods: ['sms'] } } });
    expect(r.limits.spendCap).toBe(false);
    expect(r.purposes.declared.payout!.startPerPhone).toBe(false);
  });
});

describe('declaredRoutes: what the module reads at import', () => {
  it('routes switched off stay off; a webhook path that is not text is the default one', () => {
    expect(declaredRoutes({ api, routes: { enabled: false } }).routes.enabled).toBe(false);
    expect(declaredRoutes({ api }).routes.enabled).toBe(true);
    const odd = declaredRoutes({ api, webhooks: { secret: 'whsec_c2VjcmV0', path: 7 } } as never);
    expect(odd.webhooks.path).toBe(
      declaredRoutes({ api, webhooks: { secret: 'whsec_c2VjcmV0' } }).webhooks.path,
    );
  });

  it('groups given as null read as absent (the boot then names them), not as a crash at import', () => {
    const nulls = { api, routes: null, webhooks: null } as never;
    expect(declaredRoutes(nulls)).toStrictEqual(declaredRoutes({ api }));
  });

  it('every leading and trailing slash of the prefix is dropped', () => {
    expect(declaredRoutes({ api, routes: { prefix: '//phone/verify//' } }).routes.prefix).toBe(
      'phone/verify',
    );
    expect(resolve({ routes: { prefix: '//phone//' } }).routes.prefix).toBe('phone');
  });

  it('forRootAsync: the static declaration is checked as it is declared (checkStaticRoutes)', () => {
    expect(() => declaredAsyncRoutes(undefined, { enabled: true, decorator: [] } as never)).toThrow(
      'option "webhooks.decorator" is not an option (did you mean "webhooks.decorators"?)',
    );
  });

  it("forRootAsync: a factory's other name is refused, saying to give it statically", () => {
    const declared = declaredAsyncRoutes(undefined, undefined, 'shop');
    expect(() => resolveVerificationOptions({ api, name: 'shop' }, declared)).not.toThrow();
    const error = refusal({ api, name: 'other' }, declared);
    expect([error.field, error.message]).toStrictEqual([
      'name',
      'VerificationModule: option "name" must be given statically: forRootAsync({ name, useFactory }) (routes are declared at import)',
    ]);
  });

  it("forRootAsync: a factory's webhook decorators not given statically are refused (never applied)", () => {
    const decorator: ClassDecorator = () => undefined;
    const webhooks = { secret: 'whsec_c2VjcmV0', decorators: [decorator] };
    const declared = declaredAsyncRoutes(undefined, { enabled: true, decorators: [decorator] });
    expect(() => resolveVerificationOptions({ api, webhooks }, declared)).not.toThrow();
    const error = refusal({ api, webhooks }, declaredAsyncRoutes(undefined, { enabled: true }));
    expect([error.field, error.message]).toStrictEqual([
      'webhooks.decorators',
      'VerificationModule: option "webhooks.decorators" must be given statically: forRootAsync({ webhooks: { enabled: true, decorators }, useFactory }) (routes are declared at import)',
    ]);
    // One of two given statically is not enough; the same factory called in both places makes other functions.
    const other: ClassDecorator = () => undefined;
    const both = { ...webhooks, decorators: [decorator, other] };
    const again = refusal({ api, webhooks: both }, declared);
    expect([again.field, again.message]).toStrictEqual([
      'webhooks.decorators',
      'VerificationModule: option "webhooks.decorators" holds decorators other than the ones given statically (each call of a decorator factory makes a new one): only those are applied, at import; leave webhooks.decorators out of the factory, or return that same array',
    ]);
    // forRoot declares what it is given.
    expect(() => resolveVerificationOptions({ api, webhooks })).not.toThrow();
  });

  it('keeps every entry of the webhook route decorators, so that the import names a wrong one by its index', () => {
    const decorator: ClassDecorator = () => undefined;
    const decorators = ['SkipThrottle' as never, decorator];
    expect(
      declaredRoutes({ api, webhooks: { secret: 'whsec_c2VjcmV0', decorators } }).webhooks.decorators,
    ).toStrictEqual(decorators);
    expect(
      declaredRoutes({ api, webhooks: { secret: 'whsec_c2VjcmV0', decorators: 'x' as never } }).webhooks
        .decorators,
    ).toStrictEqual([]);
  });
});

describe('optionWarnings: purposes and test-number owners', () => {
  it('a purpose naming some offered method is no warning; one naming none is', () => {
    expect(
      optionWarnings(resolve({ methods: ['sms'], purposes: { payout: { methods: ['sms', 'flash_call'] } } })),
    ).toStrictEqual([]);
    expect(
      optionWarnings(resolve({ methods: ['sms'], purposes: { payout: { methods: ['flash_call'] } } })),
    ).toStrictEqual([
      'option "purposes.payout.methods" names none of the methods this registration offers ("methods"): every start of "payout" is refused',
    ]);
  });

  it('test-number owners without owner(req) are warned of only when there are test numbers', () => {
    const numbers = [{ phoneNumber: '+79990000001', code: '1234' }];
    expect(optionWarnings(resolve({ testNumbers: { numbers: [], owners: ['a'] } }))).toStrictEqual([]);
    expect(optionWarnings(resolve({ testNumbers: { numbers, owners: ['a'] } })).at(-1)).toContain(
      'no test number is ever played and every start of one is a real, paid start; give "owner"',
    );
  });
});
