import { describe, expect, it } from '@jest/globals';
import { api, itRefusesEachCase, refusal, type RefusalCase } from '../../test/support/option-refusals.js';
import { longestClaimTtlMs, PURPOSE_PRESETS } from './purposes.options.js';
import { PURPOSES_OPTION_RULES, purposeRules } from './purposes.rules.js';
import { optionWarnings, resolveVerificationOptions } from './verification-options.resolver.js';

/** One wrong value per rule of `purposes` and of a purpose's policy: [case, options, field named, words]. */
const CASES: RefusalCase[] = [
  ['purposes', { api, purposes: [] }, 'purposes', 'must be an object of policies'],
  [
    'purposes key',
    { api, purposes: { 'Step Up': {} } },
    'purposes',
    'key "Step Up" that is not a purpose name',
  ],
  [
    'a long purposes key, named by its first 40 characters',
    { api, purposes: { ['x'.repeat(50)]: {} } },
    'purposes',
    `key "${'x'.repeat(40)}" that is not a purpose name (^[a-z][a-z0-9_-]{0,31}$)`,
  ],
  [
    'a policy left undefined',
    { api, purposes: { step_up: undefined } },
    'purposes.step_up',
    'must be an object',
  ],
  ['a policy', { api, purposes: { step_up: 'sms' } }, 'purposes.step_up', 'must be an object { methods?'],
  [
    'a policy key',
    { api, purposes: { step_up: { method: ['sms'] } } },
    'purposes.step_up',
    'unknown key "method" (known keys: methods, limits, claimTtlMs)',
  ],
  [
    'methods',
    { api, purposes: { step_up: { methods: 'sms' } } },
    'purposes.step_up.methods',
    'must be an array',
  ],
  [
    'methods[]',
    { api, purposes: { login: { methods: ['sms', 'pigeon'] } } },
    'purposes.login.methods[1]',
    'not a known method',
  ],
  [
    'limits',
    { api, purposes: { step_up: { limits: 3 } } },
    'purposes.step_up.limits',
    'must be { startPerPhone? }',
  ],
  [
    'limits key',
    { api, purposes: { step_up: { limits: { startPerIp: {} } } } },
    'purposes.step_up.limits',
    'unknown key "startPerIp" (known keys: startPerPhone)',
  ],
  [
    'limits.startPerPhone',
    { api, purposes: { step_up: { limits: { startPerPhone: 5 } } } },
    'purposes.step_up.limits.startPerPhone',
    'must be { points, windowMs }',
  ],
  [
    'limits.startPerPhone.points',
    { api, purposes: { step_up: { limits: { startPerPhone: { windowMs: 1000 } } } } },
    'purposes.step_up.limits.startPerPhone.points',
    'positive integer',
  ],
  [
    'limits.startPerPhone.windowMs',
    { api, purposes: { step_up: { limits: { startPerPhone: { points: 1, windowMs: 0 } } } } },
    'purposes.step_up.limits.startPerPhone.windowMs',
    'positive integer',
  ],
  [
    'limits.startPerPhone.windowMs left out',
    { api, purposes: { step_up: { limits: { startPerPhone: { points: 1 } } } } },
    'purposes.step_up.limits.startPerPhone.windowMs',
    'must be a positive integer (got undefined)',
  ],
  [
    'claimTtlMs',
    { api, purposes: { my_own: { claimTtlMs: 1.5 } } },
    'purposes.my_own.claimTtlMs',
    'positive integer',
  ],
];

/** The rules as they hold under one purpose's key, for the coverage check (`purposes.<name>.…`). */
const RULES = [
  ...PURPOSES_OPTION_RULES,
  ...purposeRules({ step_up: {} }),
  ...purposeRules({ login: {} }),
  ...purposeRules({ my_own: {} }),
];

describe('the rules of `purposes`: each refuses what it should at boot, naming the bad key', () => {
  itRefusesEachCase(
    CASES,
    RULES.filter((rule) => CASES.some(([, , field]) => field.replace(/\[\d+\]/g, '[]') === rule.path)).concat(
      PURPOSES_OPTION_RULES,
    ),
  );

  it('every rule of a policy holds under a purpose (each path has a case under some purpose)', () => {
    const paths = purposeRules({ x: {} }).map((rule) => rule.path.replace(/^purposes\.x/, ''));
    const covered = new Set(
      CASES.map(([, , field]) => field.replace(/\[\d+\]/g, '[]').replace(/^purposes\.[a-z_]+/, '')),
    );
    expect(paths.filter((path) => !covered.has(path))).toStrictEqual([]);
  });

  it('resolves each policy once: defaults from the registration, [] kept as none, presets as given', () => {
    const options = resolveVerificationOptions({
      api,
      verifiedPhone: { claimTtlMs: 120_000 },
      purposes: {
        step_up: PURPOSE_PRESETS.stepUp,
        blocked: { methods: [] },
        kyc: PURPOSE_PRESETS.noForeignMessengers,
        new_number: PURPOSE_PRESETS.changePhone,
      },
    });
    expect(options.purposes.default).toStrictEqual({
      methods: undefined,
      startPerPhone: false,
      claimTtlMs: 120_000,
    });
    expect(options.purposes.declared.step_up).toStrictEqual({
      methods: undefined,
      startPerPhone: { points: 5, windowMs: 3_600_000 },
      claimTtlMs: 300_000,
    });
    // A change of number: a claim of 5 minutes, 3 starts an hour per new number.
    expect(options.purposes.declared.new_number).toStrictEqual({
      methods: undefined,
      startPerPhone: { points: 3, windowMs: 3_600_000 },
      claimTtlMs: 300_000,
    });
    expect(options.purposes.declared.blocked!.methods).toStrictEqual([]);
    // A purpose without a claimTtlMs of its own takes the registration's, not the built-in default.
    expect(options.purposes.declared.blocked!.claimTtlMs).toBe(120_000);
    expect(options.purposes.declared.kyc!.methods).not.toContain('msgr1_otp');
    expect(options.purposes.declared.kyc!.methods).not.toContain('msgr2_bot');
  });

  it("the longest claim's life is the longest of the default's and every declared purpose's", () => {
    const resolved = (purposes: Record<string, { claimTtlMs?: number }>) =>
      resolveVerificationOptions({ api, verifiedPhone: { claimTtlMs: 120_000 }, purposes }).purposes;
    expect(longestClaimTtlMs(resolved({}))).toBe(120_000);
    expect(longestClaimTtlMs(resolved({ step_up: { claimTtlMs: 60_000 } }))).toBe(120_000);
    expect(
      longestClaimTtlMs(resolved({ step_up: { claimTtlMs: 60_000 }, kyc: { claimTtlMs: 900_000 } })),
    ).toBe(900_000);
  });

  it('warns at boot of a purpose none of whose methods the registration offers', () => {
    const options = resolveVerificationOptions({
      api,
      methods: ['sms'],
      purposes: { login: { methods: ['flash_call'] }, ok: { methods: ['sms'] }, none: { methods: [] } },
    });
    const warnings = optionWarnings(options).filter((w) => w.includes('purposes'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"purposes.login.methods"');
  });

  it('a wrong purpose key is named before its policy is looked into', () => {
    expect(refusal({ api, purposes: { 'a.b': { methods: 7 } } }).field).toBe('purposes');
  });
});
