import type { LoggerService, LogLevel } from '@nestjs/common';
import type { KnownVerificationMethod } from './api/api.types.js';
import type { VerificationStore } from './store/verification-store.interface.js';

/** What `owner(req)` and `limits.key` receive: the raw Express or Fastify request. */
export type HostRequest = unknown;

export interface ApiOptions {
  /** Base address of the API, without `/v1` (for example the sandbox's `sb.url`). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Per-request timeout. Default 5000 ms. */
  timeoutMs?: number;
  /** Retries of GETs (network errors, 5xx, 429): attempts after the first. Default 2. */
  maxRetries?: number;
  /** Total deadline of one GET with its retries. Default 10000 ms. */
  retryDeadlineMs?: number;
  /** Longest `Retry-After` honoured before giving up. Default 5000 ms. */
  maxRetryAfterMs?: number;
}

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
}
export type BeforeStartResult = void | undefined | true | { allow: false; reason: string };

export interface LimitsOptions {
  /** Switch every protection off (not recommended). Default true. */
  enabled?: boolean;
  /** Default 10 per hour per client key. `false` switches it off. */
  startPerIp?: RateLimit | false;
  /** Default 5 per hour per phone number. */
  startPerPhone?: RateLimit | false;
  /** Default 60 s between starts to the same phone. */
  resendCooldownMs?: number | false;
  /** Default 30 per 10 minutes per client key. */
  checkPerIp?: RateLimit | false;
  /** Coalesce duplicate starts of the same caller + phone + method. Default true. */
  coalesceStarts?: boolean;
  /** Optional spend cap over a window, from each initiation's `cost`. */
  spendCap?: { amount: number; windowMs: number; currency?: string } | false;
  /** How the per-client key is derived. Default: the client IP (trust-proxy aware). */
  key?: (req: HostRequest) => string | undefined;
  /** Host rule or captcha, run after validation and before anything is counted or spent. */
  beforeStart?: (context: StartContext) => BeforeStartResult | Promise<BeforeStartResult>;
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

export interface BalanceWatchOptions {
  /** Read the balance every `intervalMs` and emit `verification.balance_low` below `threshold`. */
  intervalMs: number;
  threshold: number;
}

export interface MetricsOptions {
  enabled: boolean;
  /** prom-client registry; default the global one. */
  registry?: unknown;
  prefix?: string;
}

export type StoreOption =
  VerificationStore | { redis: unknown; keyPrefix?: string } | { url: string; keyPrefix?: string };

export interface VerificationModuleOptions {
  api: ApiOptions;
  webhooks?: WebhookOptions;
  routes?: RoutesOptions;
  /** Methods offered to frontends. Default: every known method except `voice`. */
  methods?: KnownVerificationMethod[];
  phone?: PhoneOptions;
  limits?: LimitsOptions;
  /** Who the caller is (user id); binds handles to it. */
  owner?: (req: HostRequest) => string | undefined | Promise<string | undefined>;
  /** Default: a MemoryStore. */
  store?: StoreOption;
  reconcile?: ReconcileOptions;
  statusCache?: StatusCacheOptions;
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
}
