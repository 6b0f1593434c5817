import { API_CLIENT_OPTION_RULES } from '../api/api-client.options.js';
import {
  bool,
  describe,
  fn,
  isObject,
  nonEmptyString,
  nonNegativeInt,
  positiveInt,
  rulesUnder,
  type OptionRule,
} from '../core/option-rules.js';
import { isVerificationStore } from '../store/create-store.js';
import {
  alpha2,
  intRange,
  knownCountry,
  knownMethod,
  matching,
  nonEmptyArray,
  section,
} from './verification-option-checks.js';
import { INTEGRATOR_FEATURE_OPTION_RULES } from './integrator-features.rules.js';
import { PURPOSES_OPTION_RULES } from './purposes.rules.js';
import { LIMITS_OPTION_RULES } from './limits.rules.js';
import { ORCHESTRATION_OPTION_RULES } from './orchestration.rules.js';
import { WEBHOOK_AND_ROUTE_OPTION_RULES } from './webhooks-and-routes.rules.js';

/**
 * The table of the module's option rules, applied in order at boot by the resolver: each names its
 * field, checks it, and says what is wrong naming the field (`VerificationModule: option
 * "api.timeoutMs" must be a positive integer (got 0)`). Values are never echoed for secrets.
 */

/** Readings of the two clocks this far apart at boot mean two clocks. */
const CLOCK_AGREEMENT_MS = 1000;
const LOG_LEVELS = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];

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

  ...WEBHOOK_AND_ROUTE_OPTION_RULES,

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
  {
    path: 'dataKey',
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

  ...ORCHESTRATION_OPTION_RULES,
  ...LIMITS_OPTION_RULES,
  ...INTEGRATOR_FEATURE_OPTION_RULES,
  ...PURPOSES_OPTION_RULES,
];
