import type { LoggerService, LogLevel } from '@nestjs/common';
import { isSupportedCountry } from 'libphonenumber-js/max';
import type { VerificationApiClientOptions } from './api/api-client.options.js';
import { VERIFICATION_METHODS, type KnownVerificationMethod } from './api/api.types.js';
import type { VerificationStore } from './store/verification-store.interface.js';
import {
  resolvePumpingOptions,
  type PumpingOptions,
  type ResolvedPumping,
} from './protection/pumping-options.js';

export type { PumpingOptions, PumpingSafeList, ResolvedPumping } from './protection/pumping-options.js';

/**
 * What `owner(req)` and `limits.key(req)` receive: the raw Express or Fastify request. Both are
 * declared as methods, so a host annotates the request type its platform gives, without a cast:
 * `owner: (req: Request) => req.user?.id` (Express) or `(req: FastifyRequest) => …` (Fastify).
 */
export type HostRequest = unknown;

/** The API and its credentials: the client's options without its observation hook (the module wires it). */
export type ApiOptions = Omit<VerificationApiClientOptions, 'onRequest'>;

/** Verifies a webhook request's signature over its raw bytes. Throws or returns false when it does not hold. */
export interface WebhookVerifier {
  verify(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): boolean | Promise<boolean>;
}

export interface WebhookOptions {
  /** `whsec_…` secret(s) for the default Standard Webhooks verifier; several at once during rotation. */
  secret?: string | string[];
  /** A host's own verifier, for another scheme. */
  verifier?: WebhookVerifier;
  /** `'none'` runs without signature checks (logs a warning at boot). Default `'standard-webhooks'`. */
  signature?: 'standard-webhooks' | 'none';
  /** Timestamp tolerance. Default 300 s. */
  toleranceSeconds?: number;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: string;
  /** Serve the webhook route. Default true when a secret, verifier or `signature: 'none'` is set. */
  enabled?: boolean;
  /** Confirm each webhook with `GET /v1/verify/{id}` before emitting. Default true. */
  confirmWithApi?: boolean;
}

export interface RoutesOptions {
  /** Prefix of the client routes. Default `verification`. */
  prefix?: string;
  /** Serve the client routes (start, check, status, methods). Default true. */
  enabled?: boolean;
  /**
   * Origins (`https://shop.example`) whose pages may call the body routes cross-site: a request
   * whose `Sec-Fetch-Site` is `cross-site` is refused (403 `cross_site_request`) unless its `Origin`
   * is listed. Default none.
   */
  allowedOrigins?: string[];
  /** Largest request body the body routes accept, in bytes (413 `payload_too_large` above). Default 4096. */
  bodyLimit?: number;
}

export interface PhoneOptions {
  /** Country assumed for numbers written without `+`. Default `RU`. */
  defaultCountry?: string;
  /** ISO 3166 countries whose numbers may be verified. Default `['RU']`. */
  allowedCountries?: string[];
  /** Number types accepted. Default `['MOBILE', 'FIXED_LINE_OR_MOBILE']`. */
  allowedTypes?: string[];
}

export interface RateLimit {
  /** Requests allowed per window. */
  points: number;
  /** Window length in ms. */
  windowMs: number;
}

export interface StartContext {
  phoneNumber: string;
  method: KnownVerificationMethod;
  ip: string | undefined;
  owner: string | undefined;
  request: HostRequest;
  /**
   * Set when the pumping defence would refuse this start (its range or caller does not convert, or
   * the spend cap's reserve is for known callers). Answer `{ allow: true, challengePassed: true }`
   * once the caller solved a challenge (a captcha) to let this one start through; a plain allow
   * leaves the refusal to the defence.
   */
  suspected?: { reason: string; range: string; country: string };
}
/** Allow: nothing, `true` or `{ allow: true }`. Refuse: `{ allow: false, reason }` (the reason reaches the frontend) or `false`. */
export type BeforeStartResult =
  void | undefined | boolean | { allow: true; challengePassed?: boolean } | { allow: false; reason: string };

export interface LimitsOptions {
  /**
   * `false` switches every protection off (not recommended): limits, cooldown, spend cap and, unless
   * `coalesceStarts: true` is given, coalescing. A `beforeStart` hook still runs. Default true.
   */
  enabled?: boolean;
  /** Default 10 per hour per client key. `false` switches it off. */
  startPerIp?: RateLimit | false;
  /**
   * Default 15 per hour per phone number from all callers together: the ceiling above
   * `startPerPhoneAndCaller`, so that other callers cannot use up one caller's budget.
   */
  startPerPhone?: RateLimit | false;
  /** Default 5 per hour per phone number and caller (the owner when `owner()` answers, else the client key). */
  startPerPhoneAndCaller?: RateLimit | false;
  /** Default 60 s between one caller's starts to the same phone (other callers are not held back). */
  resendCooldownMs?: number | false;
  /** Default 30 per 10 minutes per client key. */
  checkPerIp?: RateLimit | false;
  /**
   * Default 10 per hour per phone number: wrong codes (as the API answered them) across all its
   * sessions; past it, checks and starts for the number answer 429 `too_many_wrong_codes`.
   */
  wrongCodesPerPhone?: RateLimit | false;
  /** Default 10 per hour per owner (when `owner()` answers), across numbers; same refusal. */
  wrongCodesPerOwner?: RateLimit | false;
  /**
   * Coalesce duplicate starts of the same caller (owner, else client key) + phone + method: within the
   * resend cooldown (or, with the cooldown off, while the session is pending) the first start's session
   * is handed back instead of a new paid one. Default true (false when `enabled: false`).
   */
  coalesceStarts?: boolean;
  /**
   * Spend cap: at most `amount` (major units, e.g. RUB) per `windowMs`, counted from each
   * initiation's `cost` (an estimate from the price list is reserved first; while no price is known,
   * `worstCasePrice`, default 3 RUB, the highest price the API documents). Windows are aligned on the
   * epoch shifted by `utcOffsetMinutes` (default 0: a 24 h window is a UTC day; 180: a day from
   * midnight in Moscow). Past it, starts answer 503 and `verification.spend_cap_reached` is emitted
   * once per window. Default `{ amount: 1000, windowMs: 86_400_000 }` (1,000 RUB a UTC day); raise it
   * to your traffic, or `false` to switch it off.
   */
  spendCap?: SpendCapOptions | false;
  /**
   * Pumping defence: starts and verifications per number range, country and caller; a range or caller
   * whose starts do not complete is held (429 `range_held`, `owner_held`, `client_held`), and near the
   * spend cap unknown starts wait (503 `spend_cap_reserve`). Default on (`mode: 'enforce'`); `false`
   * or `{ mode: 'off' }` switches it off, `{ mode: 'monitor' }` only reports. See README.
   */
  pumping?: PumpingOptions | false;
  /** How the per-client key is derived. Default: the client IP (trust-proxy aware), IPv6 by network prefix. */
  key?(req: HostRequest): string | undefined;
  /**
   * Length of the IPv6 prefix that is one client for the default key (one subscriber holds a whole
   * /64). IPv4-mapped IPv6 counts as the IPv4 address. Default 64; from 32 to 128.
   */
  ipv6PrefixLength?: number;
  /**
   * Host rule or captcha, run after validation, the allowlists and coalescing, before anything is counted
   * or spent. `{ allow: false, reason }` → 403 `start_refused` with that reason; a throw → 503.
   */
  beforeStart?: (context: StartContext) => BeforeStartResult | Promise<BeforeStartResult>;
}

export interface SpendCapOptions {
  /** Most spent per window, major units (RUB). */
  amount: number;
  /** Window length, ms. */
  windowMs: number;
  /** Currency of `amount` and `worstCasePrice`. Default `RUB`. */
  currency?: string;
  /** Offset of the windows' alignment from UTC, minutes. Default 0. */
  utcOffsetMinutes?: number;
  /**
   * Reserved for a start whose method has no known price (the price list could not be read yet, or
   * lacks the method), until the real `cost` replaces it. Default 3 (RUB: the highest price the API
   * documents, `sms`).
   */
  worstCasePrice?: number;
}

export interface ReconcileOptions {
  /** Poll sessions started through the module until terminal. Default true. */
  enabled?: boolean;
  /** Interval when webhooks are configured. Default 15000 ms. */
  lazyIntervalMs?: number;
  /** Grace after `expires_at` before a session is given up. Default 60000 ms. */
  graceMs?: number;
  /** How often this instance looks for due sessions (real time). Default 250 ms. */
  tickMs?: number;
}

export interface StatusCacheOptions {
  /** Coalesce status polls (one upstream GET per session per interval). Default true. */
  enabled?: boolean;
}

export interface StatusStreamOptions {
  /** Serve `GET /{prefix}/status/:verification_id/events` (Server-Sent Events). Default true. */
  enabled?: boolean;
  /** Streams one client (its `limits.key`, or its IP or IPv6 /64) may hold open on one instance. Default 5. */
  maxPerClient?: number;
  /** A `: ping` comment this often keeps proxies from closing an idle stream. Default 15000 ms. */
  heartbeatMs?: number;
  /**
   * Longest life of one stream (real time); the browser reconnects if it still waits. A stream
   * also ends once its session is past `expires_at` + `reconcile.graceMs`. Default 600000 ms.
   */
  maxDurationMs?: number;
}

export interface BalanceWatchOptions {
  /** Read the balance every `intervalMs` and emit `verification.balance_low` below `threshold`. */
  intervalMs: number;
  threshold: number;
}

export interface MetricsOptions {
  /** Counters and histograms with prom-client (an optional peer dependency, loaded only when true). */
  enabled: boolean;
  /** prom-client registry; default the global one. */
  registry?: unknown;
  /** Prefix of every metric name. Default `verification_`. */
  prefix?: string;
}

export type StoreOption =
  VerificationStore | { redis: unknown; keyPrefix?: string } | { url: string; keyPrefix?: string };

export interface VerificationModuleOptions {
  api: ApiOptions;
  webhooks?: WebhookOptions;
  routes?: RoutesOptions;
  /**
   * Methods offered to frontends, as given. Default: those of every known method except `voice` that
   * the account can use (the ones `GET /v1/prices` lists; all of them while it cannot be read).
   */
  methods?: KnownVerificationMethod[];
  phone?: PhoneOptions;
  limits?: LimitsOptions;
  /** Who the caller is (user id); binds handles to it. */
  owner?(req: HostRequest): string | undefined | Promise<string | undefined>;
  /** Default: a MemoryStore. */
  store?: StoreOption;
  reconcile?: ReconcileOptions;
  statusCache?: StatusCacheOptions;
  statusStream?: StatusStreamOptions;
  /** Session TTL requested upstream, seconds. Default: the API's default (300). */
  expirySeconds?: number;
  /** Key for handles (32+ bytes, base64 or hex); default derived from the API secret with HKDF. */
  handleKey?: string;
  balanceWatch?: BalanceWatchOptions;
  /** Prices cache TTL. Default 10 minutes. */
  pricesTtlMs?: number;
  metrics?: MetricsOptions;
  /** Levels to log (default all but verbose/debug), or `false` for none. */
  logLevels?: LogLevel[] | false;
  /** The host's logger. */
  logger?: LoggerService;
  /** Mask phone numbers in logs. Default true. */
  maskPhoneNumbers?: boolean;
  /**
   * Clock in ms since the epoch (default `Date.now`). Tests link it to the sandbox's clock
   * (`clock: () => sandbox.now()`); the default MemoryStore uses it too.
   */
  clock?: () => number;
}

/* ------------------------------------------------------------------ defaults and validation */

/** Every known method but `voice` (announced as coming soon). */
export const DEFAULT_METHODS: KnownVerificationMethod[] = VERIFICATION_METHODS.filter((m) => m !== 'voice');
const ALL_METHODS: readonly string[] = VERIFICATION_METHODS;
/**
 * The spend cap when `limits.spendCap` is not given: 1,000 RUB a UTC day, reserving 3 RUB (the
 * highest price the API documents) for a start whose price is not known.
 */
export const DEFAULT_SPEND_CAP: Readonly<Required<SpendCapOptions>> = {
  amount: 1000,
  windowMs: 86_400_000,
  currency: 'RUB',
  utcOffsetMinutes: 0,
  worstCasePrice: 3,
};
const LOG_LEVELS: readonly string[] = ['log', 'error', 'warn', 'debug', 'verbose', 'fatal'];

export interface ResolvedLimits {
  enabled: boolean;
  startPerIp: RateLimit | false;
  startPerPhone: RateLimit | false;
  startPerPhoneAndCaller: RateLimit | false;
  resendCooldownMs: number | false;
  checkPerIp: RateLimit | false;
  wrongCodesPerPhone: RateLimit | false;
  wrongCodesPerOwner: RateLimit | false;
  coalesceStarts: boolean;
  spendCap: Required<SpendCapOptions> | false;
  pumping: ResolvedPumping;
  key?: LimitsOptions['key'];
  ipv6PrefixLength: number;
  beforeStart?: LimitsOptions['beforeStart'];
}

export interface ResolvedRoutes {
  prefix: string;
  enabled: boolean;
  /** Serialised origins (`scheme://host[:port]`). */
  allowedOrigins: string[];
  bodyLimit: number;
}

/** Options after defaults were applied and validation passed. */
export interface ResolvedVerificationOptions {
  api: Required<ApiOptions>;
  webhooks: {
    secrets: string[];
    verifier?: WebhookVerifier;
    signature: 'standard-webhooks' | 'none';
    toleranceSeconds: number;
    path: string;
    enabled: boolean;
    confirmWithApi: boolean;
  };
  routes: ResolvedRoutes;
  /** The host's `methods`, or the default candidates. */
  methods: KnownVerificationMethod[];
  /** True when `methods` was not given: offer the candidates the account's price list names. */
  methodsFromAccount: boolean;
  phone: { defaultCountry: string; allowedCountries: string[]; allowedTypes: string[] };
  limits: ResolvedLimits;
  owner?: VerificationModuleOptions['owner'];
  store?: StoreOption;
  reconcile: Required<ReconcileOptions>;
  statusCache: Required<StatusCacheOptions>;
  statusStream: Required<StatusStreamOptions>;
  expirySeconds?: number;
  handleKey?: string;
  balanceWatch?: BalanceWatchOptions;
  pricesTtlMs: number;
  metrics?: MetricsOptions;
  logLevels: LogLevel[] | false;
  logger?: LoggerService;
  maskPhoneNumbers: boolean;
  clock: () => number;
}

/** Thrown at boot when an option is wrong; the message names the field. */
export class VerificationOptionsError extends Error {
  constructor(
    readonly field: string,
    problem: string,
  ) {
    super(`VerificationModule: option "${field}" ${problem}`);
    this.name = 'VerificationOptionsError';
  }
}

type Check = (value: unknown) => string | undefined;
const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);
const nonEmptyString: Check = (v) =>
  typeof v === 'string' && v.trim() !== '' ? undefined : 'must be a non-empty string';
const positiveInt: Check = (v) =>
  Number.isInteger(v) && (v as number) > 0 ? undefined : `must be a positive integer (got ${describe(v)})`;
const nonNegativeInt: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0
    ? undefined
    : `must be a non-negative integer (got ${describe(v)})`;
const fn: Check = (v) => (typeof v === 'function' ? undefined : 'must be a function');
const bool: Check = (v) =>
  typeof v === 'boolean' ? undefined : `must be true or false (got ${describe(v)})`;

function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}

function check(field: string, value: unknown, ...checks: Check[]): void {
  for (const c of checks) {
    const problem = c(value);
    if (problem) throw new VerificationOptionsError(field, problem);
  }
}
function optional(field: string, value: unknown, ...checks: Check[]): void {
  if (value !== undefined) check(field, value, ...checks);
}

function rateLimit(
  field: string,
  value: RateLimit | false | undefined,
  fallback: RateLimit,
): RateLimit | false {
  if (value === undefined) return fallback;
  if (value === false) return false;
  if (!isObject(value)) throw new VerificationOptionsError(field, 'must be { points, windowMs } or false');
  check(`${field}.points`, value.points, positiveInt);
  check(`${field}.windowMs`, value.windowMs, positiveInt);
  return { points: value.points, windowMs: value.windowMs };
}

/** `routes.allowedOrigins` as browsers send them in `Origin` (scheme://host[:port], no path). */
function resolveOrigins(value: unknown): string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value))
    throw new VerificationOptionsError(
      'routes.allowedOrigins',
      'must be an array of origins like ["https://shop.example"]',
    );
  return value.map((origin: unknown, i) => {
    const parsed = typeof origin === 'string' ? parseUrl(origin) : undefined;
    if (
      typeof origin !== 'string' ||
      !parsed ||
      parsed.origin === 'null' ||
      parsed.origin !== origin.replace(/\/$/, '').toLowerCase()
    )
      throw new VerificationOptionsError(
        `routes.allowedOrigins[${i}]`,
        `must be an origin like "https://shop.example" (scheme, host and port only; got ${describe(origin)})`,
      );
    return parsed.origin;
  });
}

function parseUrl(text: string): URL | undefined {
  try {
    return new URL(text);
  } catch {
    return undefined;
  }
}

/** Common non-ISO spellings of a country, and the ISO 3166 code meant. */
const ISO_SPELLINGS: Record<string, string> = { UK: 'GB', EN: 'GB', EL: 'GR' };

/** A code libphonenumber-js has numbering data for (a code it does not know would refuse every number). */
const knownCountry: Check = (v) => {
  if (isSupportedCountry(v as string)) return undefined;
  const meant = ISO_SPELLINGS[v as string];
  return `is not an ISO 3166 alpha-2 country code with phone numbering data (got ${describe(v)}${
    meant ? `; did you mean "${meant}"?` : ''
  })`;
};

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

  const limits = (input.limits ?? {}) as LimitsOptions;
  if (!isObject(limits)) throw new VerificationOptionsError('limits', 'must be an object');
  optional('limits.enabled', limits.enabled, bool);
  optional('limits.coalesceStarts', limits.coalesceStarts, bool);
  if (limits.resendCooldownMs !== undefined && limits.resendCooldownMs !== false)
    check('limits.resendCooldownMs', limits.resendCooldownMs, positiveInt);
  optional('limits.key', limits.key, fn);
  optional('limits.beforeStart', limits.beforeStart, fn);
  optional('limits.ipv6PrefixLength', limits.ipv6PrefixLength, (v) =>
    Number.isInteger(v) && (v as number) >= 32 && (v as number) <= 128
      ? undefined
      : `must be a whole number of bits from 32 to 128 (got ${describe(v)})`,
  );
  let spendCap: ResolvedLimits['spendCap'] = false;
  if (limits.spendCap === undefined) spendCap = { ...DEFAULT_SPEND_CAP };
  else if (limits.spendCap !== false) {
    if (!isObject(limits.spendCap))
      throw new VerificationOptionsError('limits.spendCap', 'must be { amount, windowMs } or false');
    check('limits.spendCap.amount', limits.spendCap.amount, (v) =>
      typeof v === 'number' && Number.isFinite(v) && v > 0
        ? undefined
        : `must be a positive number (got ${describe(v)})`,
    );
    check('limits.spendCap.windowMs', limits.spendCap.windowMs, positiveInt);
    optional('limits.spendCap.utcOffsetMinutes', limits.spendCap.utcOffsetMinutes, (v) =>
      Number.isInteger(v) && (v as number) >= -720 && (v as number) <= 840
        ? undefined
        : `must be a whole number of minutes from -720 to 840 (got ${describe(v)})`,
    );
    optional('limits.spendCap.worstCasePrice', limits.spendCap.worstCasePrice, (v) =>
      typeof v === 'number' && Number.isFinite(v) && v > 0
        ? undefined
        : `must be a positive number (got ${describe(v)})`,
    );
    spendCap = {
      amount: limits.spendCap.amount,
      windowMs: limits.spendCap.windowMs,
      currency: limits.spendCap.currency ?? 'RUB',
      utcOffsetMinutes: limits.spendCap.utcOffsetMinutes ?? 0,
      worstCasePrice: limits.spendCap.worstCasePrice ?? DEFAULT_SPEND_CAP.worstCasePrice,
    };
  }
  const limitsEnabled = limits.enabled ?? true;

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
    limits: {
      enabled: limitsEnabled,
      startPerIp: limitsEnabled
        ? rateLimit('limits.startPerIp', limits.startPerIp, { points: 10, windowMs: 3_600_000 })
        : false,
      startPerPhone: limitsEnabled
        ? rateLimit('limits.startPerPhone', limits.startPerPhone, { points: 15, windowMs: 3_600_000 })
        : false,
      startPerPhoneAndCaller: limitsEnabled
        ? rateLimit('limits.startPerPhoneAndCaller', limits.startPerPhoneAndCaller, {
            points: 5,
            windowMs: 3_600_000,
          })
        : false,
      resendCooldownMs: limitsEnabled ? (limits.resendCooldownMs ?? 60_000) : false,
      checkPerIp: limitsEnabled
        ? rateLimit('limits.checkPerIp', limits.checkPerIp, { points: 30, windowMs: 600_000 })
        : false,
      wrongCodesPerPhone: limitsEnabled
        ? rateLimit('limits.wrongCodesPerPhone', limits.wrongCodesPerPhone, {
            points: 10,
            windowMs: 3_600_000,
          })
        : false,
      wrongCodesPerOwner: limitsEnabled
        ? rateLimit('limits.wrongCodesPerOwner', limits.wrongCodesPerOwner, {
            points: 10,
            windowMs: 3_600_000,
          })
        : false,
      coalesceStarts: limits.coalesceStarts ?? limitsEnabled,
      spendCap: limitsEnabled ? spendCap : false,
      pumping: resolvePumpingOptions(limits.pumping, limitsEnabled),
      key: limits.key,
      ipv6PrefixLength: limits.ipv6PrefixLength ?? 64,
      beforeStart: limits.beforeStart,
    },
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
