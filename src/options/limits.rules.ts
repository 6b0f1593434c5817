import { bool, describe, fn, oneOf, positiveInt, type OptionRule } from '../core/option-rules.js';
import {
  array,
  intRange,
  matching,
  objectOrFalse,
  positiveNumber,
  section,
  share,
} from './verification-option-checks.js';
import { VERIFICATION_DEFAULTS } from './verification-options.defaults.js';

/** Rate limits: `{ points, windowMs }` or `false`. */
export const RATE_LIMITS = [
  'startPerIp',
  'freeStartPerCaller',
  'startPerPhone',
  'startPerPhoneAndCaller',
  'checkPerIp',
  'wrongCodesPerPhone',
  'wrongCodesPerOwner',
] as const;

const PUMPING_COUNTS = [
  'windowMs',
  'rangeMinStarts',
  'prefixMinStarts',
  'freshRangeMinStarts',
  'freshPrefixMinStarts',
  'callerMinStarts',
  'countryMinStarts',
  'underAttackMinStarts',
  'holdMs',
  'maxHoldMs',
  'recordTtlMs',
] as const;

const PUMPING = VERIFICATION_DEFAULTS.limits.pumping;

/** `expectedConversion`: `default` or an ISO country code, each a share strictly between 0 and 1. */
function priors(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  for (const [key, value] of Object.entries(v)) {
    if (key !== 'default' && !/^[A-Z]{2}$/.test(key))
      return `has ${describe(key)}: keys are "default" or ISO country codes like "RU"`;
    if (typeof value !== 'number' || !(value > 0 && value < 1))
      return `.${key} must be a share above 0 and below 1 (got ${describe(value)})`;
  }
  return undefined;
}

/** The rules of `limits`: rate limits, cooldown, spend cap and the pumping defence (spread into the module's table). */
export const LIMITS_OPTION_RULES: readonly OptionRule[] = [
  { path: 'limits', checks: [section()] },
  { path: 'limits.enabled', checks: [bool] },
  { path: 'limits.coalesceStarts', checks: [bool] },
  { path: 'limits.resendCooldownMs', checks: [(v, at) => (v === false ? undefined : positiveInt(v, at))] },
  { path: 'limits.key', checks: [fn] },
  { path: 'limits.beforeStart', checks: [fn] },
  { path: 'limits.assessStart', checks: [fn] },
  { path: 'limits.ipv6PrefixLength', checks: [intRange(32, 128, 'bits')] },
  { path: 'limits.spendCap', checks: [objectOrFalse('{ amount, windowMs }')] },
  { path: 'limits.spendCap.amount', required: true, checks: [positiveNumber] },
  { path: 'limits.spendCap.windowMs', required: true, checks: [positiveInt] },
  { path: 'limits.spendCap.utcOffsetMinutes', checks: [intRange(-720, 840, 'minutes')] },
  { path: 'limits.spendCap.worstCasePrice', checks: [positiveNumber] },
  ...RATE_LIMITS.flatMap((name): OptionRule[] => [
    { path: `limits.${name}`, checks: [objectOrFalse('{ points, windowMs }')] },
    { path: `limits.${name}.points`, required: true, checks: [positiveInt] },
    { path: `limits.${name}.windowMs`, required: true, checks: [positiveInt] },
  ]),

  { path: 'limits.pumping', checks: [objectOrFalse('an object ({ mode, rangeDigits, … })')] },
  { path: 'limits.pumping.mode', checks: [oneOf('enforce', 'monitor', 'off')] },
  { path: 'limits.pumping.grading', checks: [bool] },
  { path: 'limits.pumping.rangeDigits', checks: [intRange(1, 8, 'digits')] },
  ...PUMPING_COUNTS.map((name): OptionRule => ({ path: `limits.pumping.${name}`, checks: [positiveInt] })),
  {
    path: 'limits.pumping.maxHoldMs',
    required: true,
    checks: [
      (v, { parent }) =>
        ((v as number | undefined) ?? PUMPING.maxHoldMs) <
        ((parent.holdMs as number | undefined) ?? PUMPING.holdMs)
          ? 'must be at least holdMs'
          : undefined,
    ],
  },
  { path: 'limits.pumping.minConversion', checks: [share] },
  { path: 'limits.pumping.reserveShare', checks: [share] },
  {
    path: 'limits.pumping.surgeFactor',
    checks: [
      (v) =>
        typeof v === 'number' && Number.isFinite(v) && v >= 1
          ? undefined
          : `must be a number of at least 1 (got ${describe(v)})`,
    ],
  },
  { path: 'limits.pumping.expectedConversion', checks: [section('{ default?, RU?, … }'), priors] },
  { path: 'limits.pumping.safeList', checks: [section('{ numbers?, ranges?, owners? }')] },
  { path: 'limits.pumping.safeList.numbers', checks: [array()] },
  {
    path: 'limits.pumping.safeList.numbers[]',
    checks: [matching(/^\+[1-9]\d{6,14}$/, 'an E.164 number like "+79161234567"')],
  },
  { path: 'limits.pumping.safeList.ranges', checks: [array()] },
  {
    path: 'limits.pumping.safeList.ranges[]',
    checks: [matching(/^\+[1-9]\d{0,13}$/, 'a range like "+7916123" (E.164 without its last digits)')],
  },
  { path: 'limits.pumping.safeList.owners', checks: [array()] },
  { path: 'limits.pumping.safeList.owners[]', checks: [matching(/^.{1,200}$/s, 'a non-empty owner id')] },
];
