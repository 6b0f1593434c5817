/**
 * Configuration of VerificationApiClient. Same fields as `ApiOptions` in `../verification.options.ts`
 * (redeclared here because `api/` imports nothing of ours but its own types), plus an observation hook.
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
   * the cheapest in CPU. `'axios'`: the module's private `HttpService` (an axios instance no host code
   * shares), which honours `HTTP(S)_PROXY`/`NO_PROXY` in the environment, at several times the CPU per
   * request (bench/README.md, "Tools").
   */
  transport?: ApiTransport;
  /** Called after every attempt (metrics, logging). Exceptions it throws are swallowed. */
  onRequest?: (info: ApiRequestInfo) => void;
}

/** Injection token of VerificationApiClientOptions. */
export const VERIFICATION_API_CLIENT_OPTIONS = Symbol('VERIFICATION_API_CLIENT_OPTIONS');

export const API_CLIENT_DEFAULTS = {
  timeoutMs: 5000,
  maxRetries: 2,
  retryDeadlineMs: 10_000,
  maxRetryAfterMs: 5000,
} as const;
