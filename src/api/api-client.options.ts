import {
  checkOptions,
  fn,
  isObject,
  nonEmptyString,
  nonNegativeInt,
  oneOf,
  positiveInt,
  type Check,
  type OptionRule,
} from '../core/option-rules.js';

/**
 * Configuration of VerificationApiClient: its types, its defaults and its rules, defined once. The
 * module's `api` option is these options without `onRequest`; the module's option table holds
 * these rules under `api.` and its defaults object holds these defaults.
 */

/** What the client reports after every HTTP attempt. Carries no headers, body, phone number or secret. */
export interface ApiRequestInfo {
  /** Client operation: `initiate`, `getSession`, `check`, `getBalance`, `getUsage`, `getPrices`. */
  operation: ApiOperation;
  /** HTTP method. */
  method: 'GET' | 'POST';
  /** Route template, without ids (low cardinality, for metrics): e.g. `/v1/verify/:request_id`. */
  path: string;
  /** HTTP status when an answer arrived. */
  status?: number;
  durationMs: number;
  /** 1 for the first attempt, 2 for the first retry, ... */
  attempt: number;
  /** Whether the client will try again after this attempt. */
  willRetry: boolean;
  /** Short failure label: the problem's `error_code`, `http_<status>`, or the unavailability reason. */
  error?: string;
}

export type ApiTransport = 'undici' | 'axios';

export type ApiOperation = 'initiate' | 'getSession' | 'check' | 'getBalance' | 'getUsage' | 'getPrices';

export interface VerificationApiClientOptions {
  /** Base address of the API, without `/v1` (for example the sandbox's `sb.url`). */
  baseUrl: string;
  apiKey: string;
  apiSecret: string;
  /** Per-request (per-attempt) timeout. Default 5000 ms. */
  timeoutMs?: number;
  /** Retries of GETs (network errors, 5xx, 429): attempts after the first. Default 2. */
  maxRetries?: number;
  /** Total deadline of one GET with its retries. Default 10000 ms. */
  retryDeadlineMs?: number;
  /** Longest `Retry-After` honoured before giving up. Default 5000 ms. */
  maxRetryAfterMs?: number;
  /**
   * How requests travel. `'undici'` (default): an undici keep-alive `Pool` with a handler of the client's own,
   * the cheapest in CPU. `'axios'`: the client's private `HttpService` (an axios instance no host code
   * shares), which honours `HTTP(S)_PROXY`/`NO_PROXY` in the environment, at several times the CPU per
   * request (bench/README.md, "Tools"); needs the optional peers `axios` and `@nestjs/axios`.
   */
  transport?: ApiTransport;
  /** Called after every attempt (metrics, logging). Exceptions it throws are swallowed. */
  onRequest?: (info: ApiRequestInfo) => void;
}

/** Injection token of VerificationApiClientOptions. */
export const VERIFICATION_API_CLIENT_OPTIONS = Symbol('VERIFICATION_API_CLIENT_OPTIONS');

/** Defaults of the client's options. */
export const API_CLIENT_DEFAULTS = Object.freeze({
  timeoutMs: 5000,
  maxRetries: 2,
  retryDeadlineMs: 10_000,
  maxRetryAfterMs: 5000,
  transport: 'undici' as ApiTransport,
});

/** The options with every default applied (what the client runs on). */
export type ResolvedApiClientOptions = Required<Omit<VerificationApiClientOptions, 'onRequest'>> &
  Pick<VerificationApiClientOptions, 'onRequest'>;

/**
 * The longest one call of the client may last, its retries and their waits included: a GET ends by its
 * `retryDeadlineMs` (its last attempt is cut short there); a POST gets its whole `timeoutMs`, and one
 * retried after a refused connection may begin that attempt just before the deadline. Every lease that
 * guards a call (a start's coalescing claim, a journey step's claim, an in-doubt adoption's) outlasts it.
 */
export function longestCallMs(
  api: Pick<ResolvedApiClientOptions, 'timeoutMs' | 'retryDeadlineMs' | 'maxRetries'>,
  method: 'GET' | 'POST',
): number {
  if (method === 'GET') return api.retryDeadlineMs;
  return api.maxRetries === 0 ? api.timeoutMs : api.retryDeadlineMs + api.timeoutMs;
}

/** An absolute http(s) URL without credentials. Never echoes the value: it may hold a password. */
const httpUrl: Check = (v) => {
  let url: URL;
  try {
    url = new URL(v as string);
  } catch {
    return 'must be an absolute http(s) URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return 'must be an absolute http(s) URL';
  // Credentials in the URL would travel in every error's request config; they belong in apiKey/apiSecret.
  if (url.username || url.password) return 'must not contain credentials';
  return undefined;
};

/** The client's option rules. Neither key nor secret is ever echoed in a message. */
export const API_CLIENT_OPTION_RULES: readonly OptionRule[] = [
  { path: 'baseUrl', required: true, checks: [nonEmptyString, httpUrl] },
  { path: 'apiKey', required: true, checks: [nonEmptyString] },
  { path: 'apiSecret', required: true, checks: [nonEmptyString] },
  { path: 'timeoutMs', checks: [positiveInt] },
  { path: 'maxRetries', checks: [nonNegativeInt] },
  { path: 'retryDeadlineMs', checks: [positiveInt] },
  { path: 'maxRetryAfterMs', checks: [nonNegativeInt] },
  { path: 'transport', checks: [oneOf('undici', 'axios')] },
  { path: 'onRequest', checks: [fn] },
];

const OPTIONS_OBJECT: OptionRule = {
  path: '',
  required: true,
  checks: [(v) => (isObject(v) ? undefined : 'must be { baseUrl, apiKey, apiSecret, … }')],
};

/** Options the rules passed, with the defaults applied: the client takes them as they are. */
const resolvedOptions = new WeakSet<ResolvedApiClientOptions>();

/**
 * Applies the defaults to options already checked against API_CLIENT_OPTION_RULES (the module's
 * resolver checks them at boot, under `api.`).
 */
export function withApiClientDefaults(options: VerificationApiClientOptions): ResolvedApiClientOptions {
  const resolved: ResolvedApiClientOptions = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    apiSecret: options.apiSecret,
    timeoutMs: options.timeoutMs ?? API_CLIENT_DEFAULTS.timeoutMs,
    maxRetries: options.maxRetries ?? API_CLIENT_DEFAULTS.maxRetries,
    retryDeadlineMs: options.retryDeadlineMs ?? API_CLIENT_DEFAULTS.retryDeadlineMs,
    maxRetryAfterMs: options.maxRetryAfterMs ?? API_CLIENT_DEFAULTS.maxRetryAfterMs,
    transport: options.transport ?? API_CLIENT_DEFAULTS.transport,
    ...(options.onRequest ? { onRequest: options.onRequest } : {}),
  };
  resolvedOptions.add(resolved);
  return resolved;
}

/**
 * The options a client runs on: as given when they came from `withApiClientDefaults`, otherwise
 * checked against API_CLIENT_OPTION_RULES (throwing VerificationOptionsError naming the field) and
 * completed with the defaults.
 */
export function resolveApiClientOptions(options: VerificationApiClientOptions): ResolvedApiClientOptions {
  if (resolvedOptions.has(options as ResolvedApiClientOptions)) return options as ResolvedApiClientOptions;
  checkOptions([OPTIONS_OBJECT, ...API_CLIENT_OPTION_RULES], options, 'VerificationApiClient');
  return withApiClientDefaults(options);
}
