import { API_CLIENT_OPTION_RULES } from '../api/api-client.options.js';
import {
  bool,
  describe,
  fn,
  isObject,
  nonEmptyString,
  nonNegativeInt,
  oneOf,
  positiveInt,
  rulesUnder,
  type OptionRule,
} from '../core/option-rules.js';
import { DEVICE_HINTS } from '../core/journey.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { isVerificationStore } from '../store/create-store.js';
import {
  alpha2,
  array,
  intRange,
  knownCountry,
  knownMethod,
  matching,
  nonEmptyArray,
  objectOrFalse,
  onlyKeys,
  origin,
  positiveNumber,
  section,
  share,
  whsec,
} from './verification-option-checks.js';
import { VERIFICATION_DEFAULTS } from './verification-options.defaults.js';
import { webhookSecrets, webhooksConfigured } from './verification-routes.rules.js';
import { INTEGRATOR_FEATURE_OPTION_RULES } from './integrator-features.rules.js';

/**
 * The table of the module's option rules, applied in order at boot by the resolver: each names its
 * field, checks it, and says what is wrong naming the field (`VerificationModule: option
 * "api.timeoutMs" must be a positive integer (got 0)`). Values are never echoed for secrets.
 */

/** Rate limits: `{ points, windowMs }` or `false`. */
export const RATE_LIMITS = [
  'startPerIp',
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

/** Readings of the two clocks this far apart at boot mean two clocks. */
const CLOCK_AGREEMENT_MS = 1000;
const LOG_LEVELS = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];
const PUMPING = VERIFICATION_DEFAULTS.limits.pumping;
const FALLBACK = VERIFICATION_DEFAULTS.orchestration.fallback as { floorMs: number; ceilingMs: number };

/* ------------------------------------------------------------------ the table */

export const VERIFICATION_OPTION_RULES: readonly OptionRule[] = [
  { path: '', required: true, checks: [(v) => (isObject(v) ? undefined : 'must be an options object')] },

  {
    path: 'api',
    required: true,
    checks: [(v) => (isObject(v) ? undefined : 'is required: { baseUrl, apiKey, apiSecret }')],
  },
  // The API client's own rules (api/api-client.options.ts), but its observation hook: the module wires that.
  ...rulesUnder(
    'api',
    API_CLIENT_OPTION_RULES.filter((rule) => rule.path !== 'onRequest'),
  ),

  { path: 'webhooks', checks: [section()] },
  {
    path: 'webhooks.secret',
    checks: [(v, at) => (Array.isArray(v) ? undefined : (nonEmptyString(v, at) ?? whsec(v, at)))],
  },
  { path: 'webhooks.secret[]', checks: [nonEmptyString, whsec] },
  { path: 'webhooks.signature', checks: [oneOf('standard-webhooks', 'none')] },
  {
    path: 'webhooks.verifier',
    checks: [
      (v) =>
        isObject(v) && typeof (v as { verify?: unknown }).verify === 'function'
          ? undefined
          : 'must be an object with a verify(rawBody, headers) method',
    ],
  },
  { path: 'webhooks.toleranceSeconds', checks: [positiveInt] },
  { path: 'webhooks.path', checks: [nonEmptyString] },
  { path: 'webhooks.enabled', checks: [bool] },
  { path: 'webhooks.confirmWithApi', checks: [bool] },
  {
    path: 'webhooks.secret',
    required: true,
    checks: [
      (_, { parent }) =>
        parent.enabled === true && !webhooksConfigured(parent)
          ? 'is required when webhooks are enabled (or give webhooks.verifier, or signature: "none" to run unsigned)'
          : undefined,
    ],
  },
  {
    path: 'webhooks.signature',
    checks: [
      (v, { parent }) =>
        v === 'none' && (webhookSecrets(parent).length > 0 || parent.verifier !== undefined)
          ? 'is "none" while a secret or verifier is given: remove one of them'
          : undefined,
    ],
  },
  {
    path: 'webhooks.confirmWithApi',
    checks: [
      (v, { parent }) =>
        v === false && parent.signature === 'none'
          ? 'cannot be false with signature: "none": unsigned webhooks would be believed as they are'
          : undefined,
    ],
  },

  { path: 'routes', checks: [section()] },
  { path: 'routes.prefix', checks: [matching(/^[A-Za-z0-9/_\-.:]*$/, 'a URL path')] },
  { path: 'routes.enabled', checks: [bool] },
  { path: 'routes.bodyLimit', checks: [positiveInt] },
  {
    path: 'routes.allowedOrigins',
    checks: [array('must be an array of origins like ["https://shop.example"]')],
  },
  { path: 'routes.allowedOrigins[]', checks: [origin] },

  { path: 'methods', checks: [nonEmptyArray('["sms"]')] },
  { path: 'methods[]', checks: [knownMethod] },

  { path: 'phone', checks: [section()] },
  { path: 'phone.defaultCountry', checks: [alpha2(' like "RU"'), knownCountry] },
  { path: 'phone.allowedCountries', checks: [nonEmptyArray('["RU"]')] },
  { path: 'phone.allowedCountries[]', checks: [alpha2(''), knownCountry] },
  { path: 'phone.allowedTypes', checks: [nonEmptyArray('["MOBILE"]')] },

  { path: 'owner', checks: [fn] },
  { path: 'clock', checks: [fn] },
  {
    path: 'clock',
    checks: [
      (v, { root }) => {
        if (!isVerificationStore(root.store)) return undefined;
        const apart = Math.abs((v as () => number)() - root.store.now());
        return apart > CLOCK_AGREEMENT_MS
          ? `disagrees with the clock of the given store by ${apart} ms: give the store the same clock, or leave "clock" out to use the store's`
          : undefined;
      },
    ],
  },
  { path: 'expirySeconds', checks: [intRange(1, 600, 'seconds')] },
  {
    path: 'handleKey',
    checks: [
      nonEmptyString,
      (v) =>
        (v as string).length >= 32
          ? undefined
          : 'must be at least 32 characters (base64 or hex of 32+ random bytes)',
    ],
  },
  { path: 'pricesTtlMs', checks: [positiveInt] },
  { path: 'balanceWatch', checks: [section('{ intervalMs, threshold }')] },
  { path: 'balanceWatch.intervalMs', required: true, checks: [positiveInt] },
  {
    path: 'balanceWatch.threshold',
    required: true,
    checks: [
      (v) =>
        typeof v === 'number' && Number.isFinite(v) && v >= 0
          ? undefined
          : `must be a non-negative number (got ${describe(v)})`,
    ],
  },
  { path: 'reconcile', checks: [section()] },
  { path: 'reconcile.enabled', checks: [bool] },
  { path: 'reconcile.lazyIntervalMs', checks: [positiveInt] },
  { path: 'reconcile.graceMs', checks: [nonNegativeInt] },
  { path: 'reconcile.tickMs', checks: [positiveInt] },
  { path: 'statusCache', checks: [section()] },
  { path: 'statusCache.enabled', checks: [bool] },
  { path: 'statusStream', checks: [section()] },
  { path: 'statusStream.enabled', checks: [bool] },
  { path: 'statusStream.maxPerClient', checks: [positiveInt] },
  { path: 'statusStream.maxPerVerification', checks: [positiveInt] },
  { path: 'statusStream.heartbeatMs', checks: [positiveInt] },
  { path: 'statusStream.maxDurationMs', checks: [positiveInt] },
  {
    path: 'logLevels',
    checks: [
      (v) => (v === false || Array.isArray(v) ? undefined : 'must be an array of log levels or false'),
    ],
  },
  {
    path: 'logLevels[]',
    checks: [
      (v) => (LOG_LEVELS.includes(v as string) ? undefined : `is not a log level (got ${describe(v)})`),
    ],
  },
  { path: 'maskPhoneNumbers', checks: [bool] },
  {
    path: 'logger',
    checks: [
      (v) =>
        isObject(v) &&
        ['log', 'error', 'warn'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
          ? undefined
          : 'must be a LoggerService (an object with log, error and warn methods)',
    ],
  },
  { path: 'metrics', checks: [section('{ enabled, registry?, prefix? }')] },
  { path: 'metrics.enabled', required: true, checks: [bool] },
  {
    path: 'metrics.registry',
    checks: [
      (v) =>
        isObject(v) &&
        typeof (v as { getSingleMetric?: unknown }).getSingleMetric === 'function' &&
        typeof (v as { registerMetric?: unknown }).registerMetric === 'function'
          ? undefined
          : 'must be a prom-client Registry',
    ],
  },
  {
    path: 'metrics.prefix',
    checks: [matching(/^[a-zA-Z_:][a-zA-Z0-9_:]*$/, 'a Prometheus metric name prefix like "verification_"')],
  },

  { path: 'orchestration', checks: [section()] },
  { path: 'orchestration.methods', checks: [nonEmptyArray('["reverse_flash_call", "sms"]')] },
  { path: 'orchestration.methods[]', checks: [knownMethod] },
  {
    path: 'orchestration.methods',
    checks: [
      (v, { root }) =>
        Array.isArray(root.methods) &&
        !(v as unknown[]).some((method) => (root.methods as unknown[]).includes(method))
          ? 'names none of the offered "methods": every automatic start would be refused'
          : undefined,
    ],
  },
  { path: 'orchestration.mode', checks: [oneOf('price', 'cost_per_success')] },
  { path: 'orchestration.minSamples', checks: [positiveInt] },
  { path: 'orchestration.minCallers', checks: [positiveInt] },
  {
    path: 'orchestration.skippable',
    checks: [
      (v) =>
        v === 'all' || Array.isArray(v)
          ? undefined
          : `must be "all" or an array of methods (got ${describe(v)})`,
    ],
  },
  { path: 'orchestration.skippable[]', checks: [knownMethod] },
  {
    path: 'orchestration.timeoutSeconds',
    checks: [
      section('an object of seconds by method, like { sms: 60 }'),
      onlyKeys(VERIFICATION_METHODS, 'methods'),
    ],
  },
  ...VERIFICATION_METHODS.map((method): OptionRule => ({
    path: `orchestration.timeoutSeconds.${method}`,
    checks: [intRange(1, 600, 'seconds')],
  })),
  {
    path: 'orchestration.fallback',
    checks: [
      objectOrFalse('{ stalledShare?, minSamples?, floorMs?, ceilingMs? }'),
      onlyKeys(['stalledShare', 'minSamples', 'floorMs', 'ceilingMs'], 'fields'),
    ],
  },
  {
    path: 'orchestration.fallback.stalledShare',
    checks: [
      (v, at) =>
        share(v, at) ?? (v === 0 ? 'must be above 0 (0 would wait for the slowest user)' : undefined),
    ],
  },
  { path: 'orchestration.fallback.minSamples', checks: [positiveInt] },
  { path: 'orchestration.fallback.floorMs', checks: [intRange(1000, 600_000, 'ms')] },
  {
    path: 'orchestration.fallback.ceilingMs',
    checks: [
      intRange(1000, 600_000, 'ms'),
      (v, { parent }) =>
        ((v as number | undefined) ?? FALLBACK.ceilingMs) <
        ((parent.floorMs as number | undefined) ?? FALLBACK.floorMs)
          ? 'must be at least floorMs'
          : undefined,
    ],
  },
  { path: 'orchestration.maxSteps', checks: [positiveInt] },
  { path: 'orchestration.maxCost', checks: [positiveNumber] },
  {
    path: 'orchestration.exclude',
    checks: [section('{ mobile?, desktop? }'), onlyKeys(DEVICE_HINTS, 'device hints')],
  },
  ...DEVICE_HINTS.flatMap((device): OptionRule[] => [
    { path: `orchestration.exclude.${device}`, checks: [array('must be an array of methods')] },
    { path: `orchestration.exclude.${device}[]`, checks: [knownMethod] },
  ]),

  { path: 'limits', checks: [section()] },
  { path: 'limits.enabled', checks: [bool] },
  { path: 'limits.coalesceStarts', checks: [bool] },
  { path: 'limits.resendCooldownMs', checks: [(v, at) => (v === false ? undefined : positiveInt(v, at))] },
  { path: 'limits.key', checks: [fn] },
  { path: 'limits.beforeStart', checks: [fn] },
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

  ...INTEGRATOR_FEATURE_OPTION_RULES,
];
