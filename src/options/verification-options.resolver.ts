import { withApiClientDefaults } from '../api/api-client.options.js';
import { DataKeys } from '../core/data-keys.js';
import { toMinorUnits } from '../core/money.js';
import { DEFAULT_SESSION_TTL_MS } from '../core/session-record.js';
import { checkOptions } from '../core/option-rules.js';
import { isVerificationStore } from '../store/create-store.js';
import { VERIFICATION_DEFAULTS } from './verification-options.defaults.js';
import type { RATE_LIMITS } from './limits.rules.js';
import { checkKnownKeys } from './unknown-options.js';
import { checkStaticRoutes } from './static-routes.rules.js';
import type { PurposesOptions, ResolvedPurposePolicy, ResolvedPurposes } from './purposes.options.js';
import { purposeRules } from './purposes.rules.js';
import { VERIFICATION_OPTION_RULES } from './verification-options.rules.js';
import {
  declaredRouteRules,
  resolvePrefix,
  trimSlashes,
  webhookRoutePath,
  webhookSecrets,
  webhooksEnabled,
} from './verification-routes.rules.js';
import type {
  LimitsOptions,
  OrchestrationOptions,
  ResolvedOrchestration,
  ResolvedOrchestrationFallback,
  PumpingOptions,
  RateLimit,
  ResolvedLimits,
  ResolvedPumping,
  ResolvedVerificationOptions,
  RouteSettings,
  RoutesOptions,
  SpendCapOptions,
  ResolvedTestNumbers,
  TestNumbersOptions,
  VerificationModuleOptions,
  VerifiedPhoneOptions,
  WebhookRouteOptions,
} from './verification.options.js';

/**
 * The one resolver: checks a host's options against the rule table and applies the defaults, once
 * at boot (forRoot and forRootAsync alike), into ResolvedVerificationOptions. A wrong option stops
 * the application with a VerificationOptionsError naming the field. Never echoes secrets.
 */
export function resolveVerificationOptions(
  input: VerificationModuleOptions,
  /** The routes declared at import; for forRoot (and when omitted), those of `input` itself. */
  declared?: RouteSettings,
): ResolvedVerificationOptions {
  const checkKeys = () => checkKnownKeys(VERIFICATION_OPTION_RULES, input);
  checkOptions(VERIFICATION_OPTION_RULES, input, undefined, checkKeys);
  checkKeys();
  const routes = declared ?? declaredRoutes(input);
  checkOptions(declaredRouteRules(routes), input);
  checkOptions(purposeRules(input.purposes), input);
  const D = VERIFICATION_DEFAULTS;
  const webhooks = input.webhooks ?? {};
  const phone = input.phone ?? {};
  const store = input.store;
  const { onRequest: _notAnOption, ...api } = input.api as typeof input.api & { onRequest?: unknown };
  return {
    name: routes.name,
    api: withApiClientDefaults(api),
    webhooks: {
      secrets: [...webhookSecrets(webhooks)],
      verifier: webhooks.verifier,
      signature: webhooks.signature ?? D.webhooks.signature,
      toleranceSeconds: webhooks.toleranceSeconds ?? D.webhooks.toleranceSeconds,
      path: routes.webhooks.path,
      enabled: webhooksEnabled(webhooks),
      confirmWithApi: webhooks.confirmWithApi ?? D.webhooks.confirmWithApi,
    },
    routes: {
      ...routes.routes,
      // Serialised as browsers send them in `Origin`.
      allowedOrigins: (input.routes?.allowedOrigins ?? []).map((origin) => new URL(origin).origin),
      bodyLimit: input.routes?.bodyLimit ?? D.routes.bodyLimit,
    },
    methods: input.methods ? [...new Set(input.methods)] : [...D.methods],
    methodsFromAccount: input.methods === undefined,
    phone: {
      defaultCountry: phone.defaultCountry ?? D.phone.defaultCountry,
      allowedCountries: [...(phone.allowedCountries ?? D.phone.allowedCountries)],
      allowedTypes: [...(phone.allowedTypes ?? D.phone.allowedTypes)],
    },
    limits: resolveLimits(input.limits ?? {}),
    orchestration: resolveOrchestration(input.orchestration ?? {}),
    owner: input.owner,
    store,
    reconcile: withDefaults(D.reconcile, input.reconcile),
    statusCache: withDefaults(D.statusCache, input.statusCache),
    statusStream: withDefaults(D.statusStream, input.statusStream),
    expirySeconds: input.expirySeconds,
    sessionTtlMs: input.expirySeconds === undefined ? DEFAULT_SESSION_TTL_MS : input.expirySeconds * 1000,
    handleKey: input.handleKey ?? input.api.apiSecret,
    dataKey: input.dataKey,
    dataKeys: new DataKeys(input.dataKey, input.api.apiSecret),
    balanceWatch: input.balanceWatch ?? undefined,
    pricesTtlMs: input.pricesTtlMs ?? D.pricesTtlMs,
    metrics: input.metrics
      ? { ...input.metrics, prefix: input.metrics.prefix ?? D.metrics.prefix }
      : undefined,
    logLevels: input.logLevels ?? [...D.logLevels],
    logger: input.logger,
    maskPhoneNumbers: input.maskPhoneNumbers ?? D.maskPhoneNumbers,
    // One clock: the host's, else that of the store instance it gives (the rules hold the two together).
    clock: input.clock ?? (isVerificationStore(store) ? () => store.now() : Date.now),
    testNumbers: resolveTestNumbers(input.testNumbers),
    verifiedPhone: resolveVerifiedPhone(input.verifiedPhone),
    phoneChange: withDefaults(VERIFICATION_DEFAULTS.phoneChange, input.phoneChange),
    purposes: resolvePurposes(input.purposes, input.verifiedPhone?.claimTtlMs),
    history:
      input.history === undefined || input.history === false
        ? false
        : withDefaults(VERIFICATION_DEFAULTS.history, input.history),
    ledger:
      input.ledger === undefined || input.ledger === false
        ? false
        : withDefaults(VERIFICATION_DEFAULTS.ledger, input.ledger),
  };
}

/**
 * forRoot: the routes of `options`, declared when the module is imported (before the options are
 * checked: a wrong prefix or path is reported at boot by the rules, here it falls back to the default).
 */
export function declaredRoutes(options: VerificationModuleOptions): RouteSettings {
  const routes = isRecord(options) && isRecord(options.routes) ? options.routes : {};
  const webhooks = isRecord(options) && isRecord(options.webhooks) ? options.webhooks : {};
  const prefix = typeof routes.prefix === 'string' ? trimSlashes(routes.prefix) : resolvePrefix({});
  const name = isRecord(options) && typeof options.name === 'string' ? options.name : undefined;
  return {
    ...(name === undefined ? {} : { name }),
    routes: { prefix, enabled: routes.enabled !== false },
    webhooks: {
      enabled: webhooksEnabled(webhooks) === true,
      path: webhookRoutePath(prefix, typeof webhooks.path === 'string' ? webhooks.path : undefined),
      decorators: decoratorsOf(webhooks.decorators),
    },
  };
}

/** forRootAsync: only what is given statically (the factory's options are checked against it at boot). */
export function declaredAsyncRoutes(
  routes: Pick<RoutesOptions, 'prefix' | 'enabled'> | undefined,
  webhooks: WebhookRouteOptions | undefined,
  name?: string,
): RouteSettings {
  checkStaticRoutes({ routes, webhooks, name });
  const prefix = resolvePrefix({ routes });
  return {
    ...(name === undefined ? {} : { name }),
    routes: { prefix, enabled: routes?.enabled ?? VERIFICATION_DEFAULTS.routes.enabled },
    webhooks: {
      enabled: webhooks?.enabled ?? VERIFICATION_DEFAULTS.asyncWebhookRoute.enabled,
      path: webhookRoutePath(prefix, webhooks?.path),
      decorators: decoratorsOf(webhooks?.decorators),
    },
  };
}

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
  for (const [name, policy] of Object.entries(options.purposes.declared))
    if (
      policy.methods &&
      policy.methods.length > 0 &&
      !policy.methods.some((m) => options.methods.includes(m))
    )
      warnings.push(
        `option "purposes.${name}.methods" names none of the methods this registration offers ("methods"): every start of "${name}" is refused`,
      );
  const { numbers, owners } = options.testNumbers;
  if (numbers.length > 0)
    warnings.push(
      `option "testNumbers": ${numbers.length} test number(s) enabled, answered with a fixed code and never sent to the API` +
        (owners === undefined
          ? ' (any owner may use them: set testNumbers.owners to restrict them)'
          : ` (for ${owners.length} owner(s))`),
    );
  if (numbers.length > 0 && owners !== undefined && options.owner === undefined)
    warnings.push(
      'option "testNumbers.owners" is matched on the "owner" option (owner(req)), which is not given: no caller ' +
        'has an owner, so no test number is ever played and every start of one is a real, paid start; give "owner"',
    );
  return warnings;
}

/* ------------------------------------------------------------------ sections */

function resolveLimits(limits: LimitsOptions): ResolvedLimits {
  const D = VERIFICATION_DEFAULTS.limits;
  const enabled = limits.enabled ?? D.enabled;
  const rate = (name: (typeof RATE_LIMITS)[number]): RateLimit | false => {
    const given = limits[name];
    if (!enabled || given === false) return false;
    return given === undefined ? { ...D[name] } : { points: given.points, windowMs: given.windowMs };
  };
  const spendCap = enabled ? resolveSpendCap(limits.spendCap) : false;
  return {
    enabled,
    startPerIp: rate('startPerIp'),
    freeStartPerCaller: rate('freeStartPerCaller'),
    startPerPhone: rate('startPerPhone'),
    startPerPhoneAndCaller: rate('startPerPhoneAndCaller'),
    resendCooldownMs: enabled ? (limits.resendCooldownMs ?? D.resendCooldownMs) : false,
    checkPerIp: rate('checkPerIp'),
    wrongCodesPerPhone: rate('wrongCodesPerPhone'),
    wrongCodesPerOwner: rate('wrongCodesPerOwner'),
    coalesceStarts: limits.coalesceStarts ?? enabled,
    spendCap,
    worstCaseMinor: toMinorUnits((spendCap || D.spendCap).worstCasePrice) ?? 0,
    pumping: resolvePumping(limits.pumping, enabled),
    key: limits.key,
    ipv6PrefixLength: limits.ipv6PrefixLength ?? D.ipv6PrefixLength,
    beforeStart: limits.beforeStart,
    assessStart: limits.assessStart,
  };
}

function resolveSpendCap(given: SpendCapOptions | false | undefined): Required<SpendCapOptions> | false {
  if (given === false) return false;
  return withDefaults(VERIFICATION_DEFAULTS.limits.spendCap, given);
}

function resolvePumping(given: PumpingOptions | false | undefined, limitsEnabled: boolean): ResolvedPumping {
  const D = VERIFICATION_DEFAULTS.limits.pumping;
  const input = given === false ? { mode: 'off' as const } : given;
  const safeList = input?.safeList;
  return {
    ...withDefaults(D, input),
    mode: input?.mode ?? (limitsEnabled ? D.mode : 'off'),
    expectedConversion: { ...D.expectedConversion, ...input?.expectedConversion },
    safeList: {
      numbers: [...(safeList?.numbers ?? [])],
      ranges: [...(safeList?.ranges ?? [])],
      owners: [...(safeList?.owners ?? [])],
    },
  };
}

function resolveOrchestration(given: OrchestrationOptions): ResolvedOrchestration {
  const D = VERIFICATION_DEFAULTS.orchestration;
  const timeouts = { ...D.timeoutSeconds };
  for (const [method, seconds] of Object.entries(given.timeoutSeconds ?? {}))
    if (seconds !== undefined) timeouts[method as keyof typeof timeouts] = seconds;
  return {
    methods: given.methods ? [...new Set(given.methods)] : undefined,
    mode: given.mode ?? D.mode,
    minSamples: given.minSamples ?? D.minSamples,
    minCallers: given.minCallers ?? D.minCallers,
    skippable:
      given.skippable === undefined || given.skippable === 'all' ? D.skippable : [...given.skippable],
    timeoutSeconds: timeouts,
    fallback:
      given.fallback === false
        ? false
        : withDefaults(D.fallback as ResolvedOrchestrationFallback, given.fallback),
    maxSteps: given.maxSteps ?? D.maxSteps,
    maxCost: given.maxCost ?? D.maxCost,
    exclude: {
      mobile: [...(given.exclude?.mobile ?? D.exclude.mobile)],
      desktop: [...(given.exclude?.desktop ?? D.exclude.desktop)],
    },
  };
}

function resolveTestNumbers(given: TestNumbersOptions | undefined): ResolvedTestNumbers {
  const D = VERIFICATION_DEFAULTS.testNumbers;
  return {
    numbers: (given?.numbers ?? []).map(({ phoneNumber, code, outcome }) => ({
      phoneNumber,
      ...(code === undefined ? {} : { code }),
      ...(outcome === undefined ? {} : { outcome }),
    })),
    owners: given?.owners === undefined ? undefined : [...given.owners],
    maxAttempts: given?.maxAttempts ?? D.maxAttempts,
    wrongCodesPerNumber: { ...(given?.wrongCodesPerNumber ?? D.wrongCodesPerNumber) },
  };
}

function resolveVerifiedPhone(given: VerifiedPhoneOptions | undefined): Required<VerifiedPhoneOptions> {
  const resolved = withDefaults(VERIFICATION_DEFAULTS.verifiedPhone, given);
  // Node gives header names lower-cased, on Express and Fastify alike.
  return {
    ...resolved,
    header: resolved.header.toLowerCase(),
    claimHeader: resolved.claimHeader.toLowerCase(),
  };
}

function resolvePurposes(
  given: PurposesOptions | undefined,
  claimTtlMs: number | undefined,
): ResolvedPurposes {
  const base: ResolvedPurposePolicy = {
    methods: undefined,
    startPerPhone: false,
    claimTtlMs: claimTtlMs ?? VERIFICATION_DEFAULTS.verifiedPhone.claimTtlMs,
  };
  const declared: Record<string, ResolvedPurposePolicy> = Object.create(null) as Record<
    string,
    ResolvedPurposePolicy
  >;
  for (const [name, policy] of Object.entries(given ?? {})) {
    const limit = policy.limits?.startPerPhone;
    declared[name] = {
      methods: policy.methods === undefined ? undefined : [...new Set(policy.methods)],
      startPerPhone: limit === undefined ? false : { points: limit.points, windowMs: limit.windowMs },
      claimTtlMs: policy.claimTtlMs ?? base.claimTtlMs,
    };
  }
  return { default: base, declared };
}

/** `defaults` with each field the host gave (and only the fields `defaults` names). */
function withDefaults<T extends object>(defaults: Readonly<T>, given: Partial<T> | null | undefined): T {
  const resolved = { ...defaults } as T;
  if (given)
    for (const key of Object.keys(defaults) as (keyof T)[])
      if (given[key] !== undefined) resolved[key] = given[key] as T[keyof T];
  return resolved;
}

/**
 * The webhook controller's decorators as declared, every entry kept so that the import names a wrong one
 * by its index (createWebhookController); not an array: reported at boot by the rules.
 */
function decoratorsOf(value: unknown): ClassDecorator[] {
  return Array.isArray(value) ? (value as ClassDecorator[]) : [];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
