import type { LoggerService, LogLevel } from '@nestjs/common';
import type { VerificationApiClientOptions } from '../api/api-client.options.js';
import type { DataKeys } from '../core/data-keys.js';
import type { KnownVerificationMethod } from '../core/verification-method.js';
import type { StoreOption } from '../store/create-store.js';
import type { HostRequest, OwnerAnswer } from './host-request.js';
import type {
  HistoryOptions,
  LedgerOptions,
  PhoneChangeOptions,
  ResolvedTestNumbers,
  TestNumbersOptions,
  VerifiedPhoneOptions,
} from './integrator-features.options.js';
import type { LimitsOptions, ResolvedLimits } from './limits.options.js';
import type { PurposesOptions, ResolvedPurposes } from './purposes.options.js';
import type { OrchestrationOptions, ResolvedOrchestration } from './orchestration.options.js';
import type { ResolvedRoutes, RoutesOptions, WebhookOptions, WebhookVerifier } from './routes.options.js';
import type { ReconcileOptions, StatusCacheOptions, StatusStreamOptions } from './session-status.options.js';

/**
 * Every option a host gives the module, and the options after resolution. The defaults:
 * VERIFICATION_DEFAULTS (verification-options.defaults.ts); the rules: the table in
 * verification-options.rules.ts; both applied once at boot by resolveVerificationOptions.
 */

/** The API and its credentials: the client's options without its observation hook (the module wires it). */
export type ApiOptions = Omit<VerificationApiClientOptions, 'onRequest'>;

export interface PhoneOptions {
  /** Country assumed for numbers written without `+`. Default `RU`. */
  defaultCountry?: string;
  /** ISO 3166 countries whose numbers may be verified. Default `['RU']`. */
  allowedCountries?: string[];
  /** Number types accepted. Default `['MOBILE', 'FIXED_LINE_OR_MOBILE']`. */
  allowedTypes?: string[];
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

export type { StoreOption } from '../store/create-store.js';

export interface VerificationModuleOptions {
  /**
   * Names this registration, for several accounts in one app (brands, regions): inject its services
   * with `@InjectVerificationService(name)` (and the like), or bind a feature module to it with
   * `VerificationModule.forFeature(name)`; its events carry `registration: name`. Each registration
   * needs its own `routes.prefix` and webhook path. Default: the one unnamed registration.
   */
  name?: string;
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
  /** Which method `auto` picks, where a switch goes, fallback timeouts and a journey's ceilings. */
  orchestration?: OrchestrationOptions;
  /** Who the caller is (user id); binds handles to it. */
  owner?(req: HostRequest): OwnerAnswer | Promise<OwnerAnswer>;
  /** Default: a MemoryStore. */
  store?: StoreOption;
  reconcile?: ReconcileOptions;
  statusCache?: StatusCacheOptions;
  statusStream?: StatusStreamOptions;
  /** Session TTL requested upstream, seconds. Default: the API's default (300). */
  expirySeconds?: number;
  /** Key for handles (32+ bytes, base64 or hex); default derived from the API secret with HKDF. */
  handleKey?: string;
  /**
   * Key for what the store keeps about people (32+ characters, base64 or hex of 32+ random bytes):
   * numbers, addresses and owners are digested with it (HMAC-SHA-256) and kept numbers encrypted
   * (AES-256-GCM). Default: derived from the API secret with HKDF. Changing it forgets counters,
   * history and live sessions (docs/operations.md).
   */
  dataKey?: string;
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
   * The module's clock, ms since the epoch: the store it creates, its services and the webhook
   * tolerance all read it. Tests link it to the sandbox's clock (`clock: () => sandbox.now()`).
   * Default: the clock of the `store` instance given, else `Date.now`. With both a store instance
   * and a clock, the two must agree at boot (give the store the same clock).
   */
  clock?: () => number;
  /** Reviewer and demo numbers with a fixed code, never sent to the paid API. Default none. */
  testNumbers?: TestNumbersOptions;
  /** VerifiedPhoneGuard on the host's own routes: where it reads the verification, the claim's lifetime. */
  verifiedPhone?: VerifiedPhoneOptions;
  /** A change of an owner's number (`PhoneChange`): the cooldown between two, the old number's confirmation. */
  phoneChange?: PhoneChangeOptions;
  /** Keep a history per number and per owner (`{}` for the defaults). Default off. */
  history?: HistoryOptions | false;
  /** Keep a ledger of expected charges and reconcile it with the API (`{}` for the defaults). Default off. */
  ledger?: LedgerOptions | false;
  /**
   * A policy per purpose of a verification (`purpose` on start): its methods, limits and claim
   * lifetime. Keys other than the built-in purposes declare the host's own. Default: none (every
   * purpose follows the registration's own settings). See docs/verified-phone-guard.md.
   */
  purposes?: PurposesOptions;
}

/* ------------------------------------------------------------------ resolved options */
/** Options after defaults were applied and validation passed. */
export interface ResolvedVerificationOptions {
  /** The registration's name (named registrations), else undefined. */
  name: string | undefined;
  api: Required<ApiOptions>;
  webhooks: {
    secrets: string[];
    verifier?: WebhookVerifier;
    signature: 'standard-webhooks' | 'none';
    toleranceSeconds: number;
    /** The webhook route's path as served, under the client routes' prefix unless it began with `/` (no global prefix). */
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
  orchestration: ResolvedOrchestration;
  owner?: VerificationModuleOptions['owner'];
  store?: StoreOption;
  reconcile: Required<ReconcileOptions>;
  statusCache: Required<StatusCacheOptions>;
  statusStream: Required<StatusStreamOptions>;
  expirySeconds?: number;
  /** How long a session started here lives: `expirySeconds`, else the API's default (`DEFAULT_SESSION_TTL_MS`). */
  sessionTtlMs: number;
  /** The key handles and claims are derived from (HKDF): `handleKey` as given, else the API secret. */
  handleKey: string;
  /** As given (redacted from logs); read only through `dataKeys`. */
  dataKey?: string;
  /** The data key's holder (`dataKey`, else derived from the API secret): digests and sealed values. */
  dataKeys: DataKeys;
  balanceWatch?: BalanceWatchOptions;
  pricesTtlMs: number;
  metrics?: MetricsOptions & { prefix: string };
  logLevels: LogLevel[] | false;
  logger?: LoggerService;
  maskPhoneNumbers: boolean;
  /** The module's one clock: the store it creates and every service read it. */
  clock: () => number;
  /** No numbers: off. */
  testNumbers: ResolvedTestNumbers;
  /** Header names lower-cased. */
  verifiedPhone: Required<VerifiedPhoneOptions>;
  phoneChange: Required<PhoneChangeOptions>;
  /** false: no history is kept. */
  history: Required<HistoryOptions> | false;
  /** false: no ledger is kept. */
  ledger: Required<LedgerOptions> | false;
  purposes: ResolvedPurposes;
}

// Each option group's types live in a file of their own; this file names them all.
export type { HostRequest, OwnerAnswer } from './host-request.js';
export type {
  HistoryOptions,
  LedgerOptions,
  PhoneChangeOptions,
  ResolvedTestNumbers,
  TestNumber,
  TestNumbersOptions,
  VerifiedPhoneOptions,
} from './integrator-features.options.js';
export type {
  BeforeStartResult,
  LimitsOptions,
  RateLimit,
  ResolvedLimits,
  SpendCapOptions,
  StartAssessment,
  StartAssessmentContext,
  StartContext,
} from './limits.options.js';
export type {
  OrchestrationFallbackOptions,
  OrchestrationOptions,
  ResolvedOrchestration,
  ResolvedOrchestrationFallback,
} from './orchestration.options.js';
export type { PumpingOptions, PumpingSafeList, ResolvedPumping } from './pumping.options.js';
export type {
  BuiltInPurpose,
  PurposePolicy,
  PurposesOptions,
  ResolvedPurposePolicy,
  ResolvedPurposes,
} from './purposes.options.js';
export type {
  ResolvedRoutes,
  RouteSettings,
  RoutesOptions,
  WebhookOptions,
  WebhookRouteOptions,
  WebhookVerifier,
} from './routes.options.js';
export type { ReconcileOptions, StatusCacheOptions, StatusStreamOptions } from './session-status.options.js';

// The defaults, the rules and the resolver live beside these types (one role per file).
export {
  DEFAULT_METHODS,
  DEFAULT_SPEND_CAP,
  VERIFICATION_DEFAULTS,
} from './verification-options.defaults.js';
export {
  declaredAsyncRoutes,
  declaredRoutes,
  optionWarnings,
  resolveVerificationOptions,
} from './verification-options.resolver.js';
export { VerificationOptionsError } from '../core/option-rules.js';
