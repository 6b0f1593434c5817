import { PhoneVerificationError } from './phone-verification.error.js';
import { describe as suite, expect, it } from '@jest/globals';
import {
  bool,
  checkOptions,
  describe,
  fn,
  isObject,
  nonEmptyString,
  nonNegativeInt,
  oneOf,
  positiveInt,
  rulesUnder,
  VerificationOptionsError,
  type OptionRule,
} from './option-rules.js';

/** The error checkOptions throws for `options`, or undefined when they pass. */
function failure(
  rules: OptionRule[],
  options: unknown,
  owner?: string,
): VerificationOptionsError | undefined {
  try {
    checkOptions(rules, options, owner);
    return undefined;
  } catch (error) {
    if (error instanceof VerificationOptionsError) return error;
    throw error;
  }
}

suite('option rules', () => {
  it('an error names the field, the problem and whose option it is, as the package’s error', () => {
    const error = new VerificationOptionsError('api.timeoutMs', 'must be a positive integer (got 0)');
    expect(error).toBeInstanceOf(PhoneVerificationError);
    expect(error.name).toBe('VerificationOptionsError');
    expect(error.field).toBe('api.timeoutMs');
    expect(error.message).toBe(
      'VerificationModule: option "api.timeoutMs" must be a positive integer (got 0)',
    );
    expect(new VerificationOptionsError('baseUrl', 'x', 'VerificationApiClient').message).toBe(
      'VerificationApiClient: option "baseUrl" x',
    );
  });

  it('checks a nested field where it is given; an absent one passes unless required', () => {
    const rules: OptionRule[] = [{ path: 'api.timeoutMs', checks: [positiveInt] }];
    expect(failure(rules, {})).toBeUndefined();
    expect(failure(rules, { api: {} })).toBeUndefined();
    expect(failure(rules, { api: { timeoutMs: 5 } })).toBeUndefined();
    expect(failure(rules, { api: { timeoutMs: 0 } }, 'Host')?.message).toBe(
      'Host: option "api.timeoutMs" must be a positive integer (got 0)',
    );
    const required: OptionRule[] = [{ path: 'api.apiKey', checks: [nonEmptyString], required: true }];
    expect(failure(required, { api: {} })?.field).toBe('api.apiKey');
    // Required only where its parent is given: an option switched off or absent is not checked.
    expect(failure(required, {})).toBeUndefined();
    expect(failure(required, { api: null })).toBeUndefined();
    expect(failure(required, { api: false })).toBeUndefined();
  });

  it('checks each element of an array, naming its index', () => {
    const rules: OptionRule[] = [{ path: 'limits.safeList.ranges[]', checks: [nonEmptyString] }];
    expect(failure(rules, { limits: { safeList: { ranges: ['+7916', '+7917'] } } })).toBeUndefined();
    expect(failure(rules, { limits: { safeList: { ranges: ['+7916', ''] } } })?.field).toBe(
      'limits.safeList.ranges[1]',
    );
    expect(failure(rules, { limits: { safeList: { ranges: 'x' } } })).toBeUndefined();
    expect(failure(rules, { limits: [{ safeList: { ranges: [''] } }] })).toBeUndefined();
  });

  it('the first failing rule and check wins; a check sees the field its parent and the whole options', () => {
    const seen: unknown[] = [];
    const rules: OptionRule[] = [
      {
        path: 'a.b',
        checks: [
          (v, at) => {
            seen.push(v, at.parent, at.root);
            return undefined;
          },
          () => 'first problem',
          () => 'second problem',
        ],
      },
      { path: 'a.c', checks: [() => 'later rule'] },
    ];
    const options = { a: { b: 1, c: 2 } };
    expect(failure(rules, options)?.message).toBe('VerificationModule: option "a.b" first problem');
    expect(seen).toStrictEqual([1, options.a, options]);
  });

  it('a rule between fields runs even when they are absent; a rule on the root sees the whole value', () => {
    const always: OptionRule[] = [
      {
        path: 'limits.maxHoldMs',
        checks: [(v) => (v === undefined ? 'is missing' : undefined)],
        always: true,
      },
    ];
    expect(failure(always, {})?.field).toBe('limits.maxHoldMs');
    expect(failure(always, { limits: null })?.field).toBe('limits.maxHoldMs');
    expect(failure(always, { limits: { maxHoldMs: 1 } })).toBeUndefined();

    const root: OptionRule[] = [
      { path: '', checks: [(v) => (isObject(v) ? undefined : 'must be an object')] },
    ];
    expect(failure(root, [])?.field).toBe('(root)');
    expect(failure(root, null)?.message).toBe('VerificationModule: option "(root)" must be an object');
    expect(failure(root, {})).toBeUndefined();
  });

  it('rulesUnder moves a table under a prefix', () => {
    expect(rulesUnder('api', [{ path: 'timeoutMs', checks: [positiveInt] }])).toStrictEqual([
      { path: 'api.timeoutMs', checks: [positiveInt] },
    ]);
    expect(
      failure(rulesUnder('api', [{ path: 'timeoutMs', checks: [positiveInt] }]), { api: { timeoutMs: -1 } })
        ?.field,
    ).toBe('api.timeoutMs');
  });

  it('describes a value briefly, never quoting the content of an object or array', () => {
    expect(describe('x'.repeat(40))).toBe(JSON.stringify('x'.repeat(40)));
    expect(describe('x'.repeat(41))).toBe(JSON.stringify(`${'x'.repeat(40)}…`));
    expect(describe(['secret'])).toBe('an array');
    expect(describe({ apiSecret: 'secret' })).toBe('an object');
    expect(describe(null)).toBe('null');
    expect(describe(undefined)).toBe('undefined');
    expect(describe(12.5)).toBe('12.5');
    expect(describe(false)).toBe('false');
  });

  it('isObject is a plain object: not null, not an array', () => {
    expect([{}, { a: 1 }].map(isObject)).toStrictEqual([true, true]);
    expect([null, [], 'x', 1, undefined].map(isObject)).toStrictEqual([false, false, false, false, false]);
  });

  it('the shared checks say what they expected and what they got', () => {
    const ctx = { parent: {}, root: {} };
    expect(positiveInt(1, ctx)).toBeUndefined();
    expect(positiveInt(0, ctx)).toBe('must be a positive integer (got 0)');
    expect(positiveInt(1.5, ctx)).toBe('must be a positive integer (got 1.5)');
    expect(nonNegativeInt(0, ctx)).toBeUndefined();
    expect(nonNegativeInt(-1, ctx)).toBe('must be a non-negative integer (got -1)');
    expect(nonNegativeInt('1', ctx)).toBe('must be a non-negative integer (got "1")');
    expect(nonEmptyString('a', ctx)).toBeUndefined();
    expect(nonEmptyString('  ', ctx)).toBe('must be a non-empty string');
    expect(nonEmptyString(1, ctx)).toBe('must be a non-empty string');
    expect(fn(() => 1, ctx)).toBeUndefined();
    expect(fn('f', ctx)).toBe('must be a function');
    expect(bool(false, ctx)).toBeUndefined();
    expect(bool('true', ctx)).toBe('must be true or false (got "true")');
  });

  it('oneOf lists the allowed values', () => {
    const ctx = { parent: {}, root: {} };
    expect(oneOf('enforce', 'monitor', 'off')('monitor', ctx)).toBeUndefined();
    expect(oneOf('enforce', 'monitor', 'off')('block', ctx)).toBe(
      'must be "enforce", "monitor" or "off" (got "block")',
    );
    expect(oneOf('a', 'b')('c', ctx)).toBe('must be "a" or "b" (got "c")');
    expect(oneOf('only')(undefined, ctx)).toBe('must be "only" (got undefined)');
  });
});
