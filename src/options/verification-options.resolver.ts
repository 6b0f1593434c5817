import { VERIFICATION_METHODS, type KnownVerificationMethod } from '../api/api.types.js';
import { resolveLimits } from './verification-options.limits.js';
import {
  bool,
  check,
  describe,
  fn,
  isObject,
  knownCountry,
  nonEmptyString,
  nonNegativeInt,
  optional,
  positiveInt,
  resolveOrigins,
  VerificationOptionsError,
} from './verification-options.rules.js';
import type {
  ApiOptions,
  PhoneOptions,
  ReconcileOptions,
  ResolvedVerificationOptions,
  RoutesOptions,
  VerificationModuleOptions,
  WebhookOptions,
} from './verification.options.js';

/**
 * The options' defaults and the resolver that turns a host's options into
 * ResolvedVerificationOptions, each option checked at boot with a message naming the field
 * (the checks: verification-options.rules.ts; `limits`: verification-options.limits.ts).
 */

/** Every known method but `voice` (announced as coming soon). */
export const DEFAULT_METHODS: KnownVerificationMethod[] = VERIFICATION_METHODS.filter((m) => m !== 'voice');
const ALL_METHODS: readonly string[] = VERIFICATION_METHODS;
const LOG_LEVELS: readonly string[] = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];

/**
 * Options that boot but are probably not what the host meant: the module logs each one at boot.
 * Never echoes secrets.
 */
export function optionWarnings(options: ResolvedVerificationOptions): string[] {
  const warnings: string[] = [];
  if (/\/v1$/i.test(options.api.baseUrl))
    warnings.push(
      'option "api.baseUrl" ends in /v1, and the module adds /v1 to every path itself (/v1/v1/verify would answer 404): give the URL without it',
    );
  return warnings;
}

function normalizePrefix(prefix: string): string {
  return prefix.replace(/^\/+|\/+$/g, '');
}

/**
 * Applies defaults and validates. Called once at boot (forRoot and forRootAsync alike);
 * a wrong option stops the application with a message naming the field. Never echoes secrets.
 */
export function resolveVerificationOptions(input: VerificationModuleOptions): ResolvedVerificationOptions {
  if (!isObject(input)) throw new VerificationOptionsError('(root)', 'must be an options object');
  const api = input.api as Partial<ApiOptions> | undefined;
  if (!isObject(api))
    throw new VerificationOptionsError('api', 'is required: { baseUrl, apiKey, apiSecret }');
  check('api.baseUrl', api.baseUrl, nonEmptyString, (v) => {
    try {
      const u = new URL(v as string);
      return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : 'must be an http(s) URL';
    } catch {
      return `must be an absolute http(s) URL (got ${describe(v)})`;
    }
  });
  check('api.apiKey', api.apiKey, nonEmptyString);
  // The secret itself is never echoed in a message.
  check('api.apiSecret', api.apiSecret, nonEmptyString);
  optional('api.timeoutMs', api.timeoutMs, positiveInt);
  optional('api.maxRetries', api.maxRetries, nonNegativeInt);
  optional('api.retryDeadlineMs', api.retryDeadlineMs, positiveInt);
  optional('api.maxRetryAfterMs', api.maxRetryAfterMs, nonNegativeInt);
  optional('api.transport', api.transport, (v) =>
    v === 'undici' || v === 'axios' ? undefined : `must be "undici" or "axios" (got ${describe(v)})`,
  );

  const webhooks = (input.webhooks ?? {}) as WebhookOptions;
  if (!isObject(webhooks)) throw new VerificationOptionsError('webhooks', 'must be an object');
  const secrets =
    webhooks.secret === undefined ? [] : Array.isArray(webhooks.secret) ? webhooks.secret : [webhooks.secret];
  secrets.forEach((s, i) =>
    check(
      Array.isArray(webhooks.secret) ? `webhooks.secret[${i}]` : 'webhooks.secret',
      s,
      nonEmptyString,
      (v) =>
        /^whsec_[A-Za-z0-9+/=]+$/.test(v as string)
          ? undefined
          : 'must be a Standard Webhooks secret ("whsec_<base64>")',
    ),
  );
  optional('webhooks.signature', webhooks.signature, (v) =>
    v === 'standard-webhooks' || v === 'none'
      ? undefined
      : `must be "standard-webhooks" or "none" (got ${describe(v)})`,
  );
  if (
    webhooks.verifier !== undefined &&
    !(isObject(webhooks.verifier) && typeof webhooks.verifier.verify === 'function')
  )
    throw new VerificationOptionsError(
      'webhooks.verifier',
      'must be an object with a verify(rawBody, headers) method',
    );
  optional('webhooks.toleranceSeconds', webhooks.toleranceSeconds, positiveInt);
  optional('webhooks.path', webhooks.path, nonEmptyString);
  optional('webhooks.enabled', webhooks.enabled, bool);
  optional('webhooks.confirmWithApi', webhooks.confirmWithApi, bool);
  const signature = webhooks.signature ?? 'standard-webhooks';
  const webhooksConfigured = secrets.length > 0 || webhooks.verifier !== undefined || signature === 'none';
  if (webhooks.enabled === true && !webhooksConfigured)
    throw new VerificationOptionsError(
      'webhooks.secret',
      'is required when webhooks are enabled (or give webhooks.verifier, or signature: "none" to run unsigned)',
    );

  const routes = (input.routes ?? {}) as RoutesOptions;
  optional('routes.prefix', routes.prefix, (v) =>
    typeof v === 'string' && /^[A-Za-z0-9/_\-.:]*$/.test(v)
      ? undefined
      : `must be a URL path (got ${describe(v)})`,
  );
  optional('routes.enabled', routes.enabled, bool);
  optional('routes.bodyLimit', routes.bodyLimit, positiveInt);
  const allowedOrigins = resolveOrigins(routes.allowedOrigins);

  let methods = DEFAULT_METHODS;
  if (input.methods !== undefined) {
    if (!Array.isArray(input.methods) || input.methods.length === 0)
      throw new VerificationOptionsError('methods', 'must be a non-empty array of method names');
    input.methods.forEach((m, i) => {
      if (!ALL_METHODS.includes(m as string))
        throw new VerificationOptionsError(
          `methods[${i}]`,
          `is not a known method (got ${describe(m)}; known: ${ALL_METHODS.join(', ')})`,
        );
    });
    methods = [...new Set(input.methods)];
  }

  const phone = (input.phone ?? {}) as PhoneOptions;
  optional(
    'phone.defaultCountry',
    phone.defaultCountry,
    (v) =>
      typeof v === 'string' && /^[A-Z]{2}$/.test(v)
        ? undefined
        : `must be an ISO 3166 alpha-2 code like "RU" (got ${describe(v)})`,
    knownCountry,
  );
  if (phone.allowedCountries !== undefined) {
    if (!Array.isArray(phone.allowedCountries) || phone.allowedCountries.length === 0)
      throw new VerificationOptionsError('phone.allowedCountries', 'must be a non-empty array like ["RU"]');
    phone.allowedCountries.forEach((c, i) =>
      check(
        `phone.allowedCountries[${i}]`,
        c,
        (v) =>
          typeof v === 'string' && /^[A-Z]{2}$/.test(v)
            ? undefined
            : `must be an ISO 3166 alpha-2 code (got ${describe(v)})`,
        knownCountry,
      ),
    );
  }
  if (
    phone.allowedTypes !== undefined &&
    (!Array.isArray(phone.allowedTypes) || phone.allowedTypes.length === 0)
  )
    throw new VerificationOptionsError('phone.allowedTypes', 'must be a non-empty array like ["MOBILE"]');

  optional('owner', input.owner, fn);
  optional('clock', input.clock, fn);
  optional('expirySeconds', input.expirySeconds, (v) =>
    Number.isInteger(v) && (v as number) > 0 && (v as number) <= 600
      ? undefined
      : `must be an integer of 1 to 600 seconds (got ${describe(v)})`,
  );
  optional('handleKey', input.handleKey, nonEmptyString, (v) =>
    (v as string).length >= 32
      ? undefined
      : 'must be at least 32 characters (base64 or hex of 32+ random bytes)',
  );
  optional('pricesTtlMs', input.pricesTtlMs, positiveInt);
  if (input.balanceWatch !== undefined) {
    if (!isObject(input.balanceWatch))
      throw new VerificationOptionsError('balanceWatch', 'must be { intervalMs, threshold }');
    check('balanceWatch.intervalMs', input.balanceWatch.intervalMs, positiveInt);
    check('balanceWatch.threshold', input.balanceWatch.threshold, (v) =>
      typeof v === 'number' && Number.isFinite(v) && v >= 0
        ? undefined
        : `must be a non-negative number (got ${describe(v)})`,
    );
  }
  const reconcile = (input.reconcile ?? {}) as ReconcileOptions;
  optional('reconcile.enabled', reconcile.enabled, bool);
  optional('reconcile.lazyIntervalMs', reconcile.lazyIntervalMs, positiveInt);
  optional('reconcile.graceMs', reconcile.graceMs, nonNegativeInt);
  optional('reconcile.tickMs', reconcile.tickMs, positiveInt);
  optional('statusCache.enabled', input.statusCache?.enabled, bool);
  if (input.statusStream !== undefined && !isObject(input.statusStream))
    throw new VerificationOptionsError('statusStream', 'must be an object');
  optional('statusStream.enabled', input.statusStream?.enabled, bool);
  optional('statusStream.maxPerClient', input.statusStream?.maxPerClient, positiveInt);
  optional('statusStream.heartbeatMs', input.statusStream?.heartbeatMs, positiveInt);
  optional('statusStream.maxDurationMs', input.statusStream?.maxDurationMs, positiveInt);
  if (input.logLevels !== undefined && input.logLevels !== false) {
    if (!Array.isArray(input.logLevels))
      throw new VerificationOptionsError('logLevels', 'must be an array of log levels or false');
    input.logLevels.forEach((l, i) =>
      check(`logLevels[${i}]`, l, (v) =>
        LOG_LEVELS.includes(v as string) ? undefined : `is not a log level (got ${describe(v)})`,
      ),
    );
  }
  optional('maskPhoneNumbers', input.maskPhoneNumbers, bool);
  optional('logger', input.logger, (v) =>
    isObject(v) &&
    ['log', 'error', 'warn'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function')
      ? undefined
      : 'must be a LoggerService (an object with log, error and warn methods)',
  );
  if (input.metrics !== undefined) {
    if (!isObject(input.metrics))
      throw new VerificationOptionsError('metrics', 'must be { enabled, registry?, prefix? }');
    check('metrics.enabled', input.metrics.enabled, bool);
    optional('metrics.registry', input.metrics.registry, (v) =>
      isObject(v) &&
      typeof (v as { getSingleMetric?: unknown }).getSingleMetric === 'function' &&
      typeof (v as { registerMetric?: unknown }).registerMetric === 'function'
        ? undefined
        : 'must be a prom-client Registry',
    );
    optional('metrics.prefix', input.metrics.prefix, (v) =>
      typeof v === 'string' && /^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(v)
        ? undefined
        : `must be a Prometheus metric name prefix like "verification_" (got ${describe(v)})`,
    );
  }

  return {
    api: {
      baseUrl: (api.baseUrl as string).replace(/\/+$/, ''),
      apiKey: api.apiKey as string,
      apiSecret: api.apiSecret as string,
      timeoutMs: api.timeoutMs ?? 5000,
      maxRetries: api.maxRetries ?? 2,
      retryDeadlineMs: api.retryDeadlineMs ?? 10_000,
      maxRetryAfterMs: api.maxRetryAfterMs ?? 5000,
      transport: api.transport ?? 'undici',
    },
    webhooks: {
      secrets,
      verifier: webhooks.verifier,
      signature,
      toleranceSeconds: webhooks.toleranceSeconds ?? 300,
      path: webhooks.path ?? 'webhooks',
      enabled: (webhooks.enabled ?? true) && webhooksConfigured,
      confirmWithApi: webhooks.confirmWithApi ?? true,
    },
    routes: {
      prefix: normalizePrefix(routes.prefix ?? 'verification'),
      enabled: routes.enabled ?? true,
      allowedOrigins,
      bodyLimit: routes.bodyLimit ?? 4096,
    },
    methods,
    methodsFromAccount: input.methods === undefined,
    phone: {
      defaultCountry: phone.defaultCountry ?? 'RU',
      allowedCountries: phone.allowedCountries ?? ['RU'],
      allowedTypes: phone.allowedTypes ?? ['MOBILE', 'FIXED_LINE_OR_MOBILE'],
    },
    limits: resolveLimits(input.limits),
    owner: input.owner,
    store: input.store,
    reconcile: {
      enabled: reconcile.enabled ?? true,
      lazyIntervalMs: reconcile.lazyIntervalMs ?? 15_000,
      graceMs: reconcile.graceMs ?? 60_000,
      tickMs: reconcile.tickMs ?? 250,
    },
    statusCache: { enabled: input.statusCache?.enabled ?? true },
    statusStream: {
      enabled: input.statusStream?.enabled ?? true,
      maxPerClient: input.statusStream?.maxPerClient ?? 5,
      heartbeatMs: input.statusStream?.heartbeatMs ?? 15_000,
      maxDurationMs: input.statusStream?.maxDurationMs ?? 600_000,
    },
    expirySeconds: input.expirySeconds,
    handleKey: input.handleKey,
    balanceWatch: input.balanceWatch,
    pricesTtlMs: input.pricesTtlMs ?? 600_000,
    metrics: input.metrics,
    logLevels: input.logLevels ?? ['log', 'error', 'warn', 'fatal'],
    logger: input.logger,
    maskPhoneNumbers: input.maskPhoneNumbers ?? true,
    clock: input.clock ?? Date.now,
  };
}
