import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import {
  resolveApiClientOptions,
  VERIFICATION_API_CLIENT_OPTIONS,
  type ApiRequestInfo,
  type VerificationApiClientOptions,
} from './api-client.options.js';
import {
  errorLabel,
  readResponse,
  unavailableFromThrown,
  type ApiError,
  type Call,
  type Outcome,
} from './api-response.reader.js';
import {
  toBalance,
  toCheckRequestWire,
  toCheckResult,
  toInitiateRequestWire,
  toInitiateResult,
  toPrices,
  toUsageParams,
  toUsageSummary,
  toVerificationSession,
} from './api.mapper.js';
import type {
  Balance,
  CheckRequest,
  CheckResult,
  InitiateRequest,
  InitiateResult,
  Prices,
  UsageQuery,
  UsageSummary,
  VerificationSession,
} from './api.types.js';
import { AxiosTransport } from './axios-transport.js';
import { toHttpOrigin, type ExchangeTransport, type HttpAnswer, type HttpOrigin } from './http-transport.js';
import { UndiciTransport } from './undici-transport.js';
import { backoffDelay, isRetryableStatus } from './retry-policy.js';
import { VerificationApiError, VerificationApiUnavailableError } from './verification-api.error.js';

/** Bodies above this are not a verification API answer. */
const MAX_BODY_BYTES = 1024 * 1024;
const ACCEPT = 'application/json, application/problem+json';
const USER_AGENT = 'nestjs-phone-verification';

/**
 * Typed client of the verification API. GETs are retried on network errors, 5xx and 429 (within
 * `maxRetries` and `retryDeadlineMs`); POSTs are retried only when the connection was refused, i.e.
 * nothing reached the server, because a repeated initiate charges twice and a repeated check spends an
 * attempt. Every failure is a VerificationApiError or a VerificationApiUnavailableError.
 */
@Injectable()
export class VerificationApiClient implements OnModuleInit, OnModuleDestroy {
  // Private (#) so neither util.inspect nor a serialiser of the client ever shows the credentials.
  readonly #authorization: string;
  readonly #origin: HttpOrigin;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #retryDeadlineMs: number;
  readonly #maxRetryAfterMs: number;
  readonly #onRequest: ((info: ApiRequestInfo) => void) | undefined;
  /** What sends each exchange (`api.transport`). */
  readonly #sender: ExchangeTransport;
  readonly #getHeaders: Record<string, string>;
  readonly #postHeaders: Record<string, string>;

  /**
   * Within the module, `options` are the module's resolved `api` options, checked at boot; given
   * by hand (`new VerificationApiClient(...)`, `create`), they are checked here against the same
   * rules (API_CLIENT_OPTION_RULES), throwing VerificationOptionsError naming the field.
   */
  constructor(@Inject(VERIFICATION_API_CLIENT_OPTIONS) options: VerificationApiClientOptions) {
    const resolved = resolveApiClientOptions(options);
    this.#origin = toHttpOrigin(resolved.baseUrl);
    this.#authorization =
      'Basic ' + Buffer.from(`${resolved.apiKey}:${resolved.apiSecret}`, 'utf8').toString('base64');
    this.#getHeaders = { Authorization: this.#authorization, Accept: ACCEPT, 'User-Agent': USER_AGENT };
    this.#postHeaders = { ...this.#getHeaders, 'Content-Type': 'application/json' };
    this.#timeoutMs = resolved.timeoutMs;
    this.#maxRetries = resolved.maxRetries;
    this.#retryDeadlineMs = resolved.retryDeadlineMs;
    this.#maxRetryAfterMs = resolved.maxRetryAfterMs;
    this.#onRequest = resolved.onRequest;
    this.#sender =
      resolved.transport === 'undici'
        ? new UndiciTransport()
        : new AxiosTransport(options === resolved ? 'VerificationModule' : 'VerificationApiClient');
  }

  /**
   * At boot: loads what the transport needs, so that a missing optional peer (axios for `transport:
   * 'axios'`) fails the boot with the package to install, not every request later.
   */
  async onModuleInit(): Promise<void> {
    await this.#sender.ready?.();
  }

  /** A client outside Nest DI (with its own axios instance for `transport: 'axios'`). Call `close()` when done. */
  static create(options: VerificationApiClientOptions): VerificationApiClient {
    return new VerificationApiClient(options);
  }

  /** `POST /v1/verify`. Never retried once it may have reached the server. */
  initiate(req: InitiateRequest): Promise<InitiateResult> {
    return this.#call({
      operation: 'initiate',
      method: 'POST',
      route: '/v1/verify',
      path: '/v1/verify',
      data: toInitiateRequestWire(req),
      map: toInitiateResult,
    });
  }

  /** `GET /v1/verify/{request_id}`: the source of truth. */
  getSession(requestId: string): Promise<VerificationSession> {
    return this.#call({
      operation: 'getSession',
      method: 'GET',
      route: '/v1/verify/:request_id',
      path: `/v1/verify/${encodeURIComponent(requestId)}`,
      map: toVerificationSession,
    });
  }

  /** `POST /v1/verify/check`. Never retried once it may have reached the server. */
  check(req: CheckRequest): Promise<CheckResult> {
    return this.#call({
      operation: 'check',
      method: 'POST',
      route: '/v1/verify/check',
      path: '/v1/verify/check',
      data: toCheckRequestWire(req),
      map: toCheckResult,
    });
  }

  getBalance(): Promise<Balance> {
    return this.#call({
      operation: 'getBalance',
      method: 'GET',
      route: '/v1/balance',
      path: '/v1/balance',
      map: toBalance,
    });
  }

  async getUsage(query?: UsageQuery): Promise<UsageSummary> {
    return this.#call({
      operation: 'getUsage',
      method: 'GET',
      route: '/v1/usage',
      path: '/v1/usage' + queryString(toUsageParams(query)),
      map: toUsageSummary,
    });
  }

  getPrices(): Promise<Prices> {
    return this.#call({
      operation: 'getPrices',
      method: 'GET',
      route: '/v1/prices',
      path: '/v1/prices',
      map: toPrices,
    });
  }

  /** Closes the keep-alive connections. */
  close(): void {
    this.#sender.close();
  }

  onModuleDestroy(): void {
    this.close();
  }

  async #call<T>(call: Call<T>): Promise<T> {
    // A missing optional peer is the caller's configuration error (VerificationOptionsError), not an outage.
    if (this.#sender.ready) await this.#sender.ready();
    const deadline = Date.now() + this.#retryDeadlineMs;
    for (let attempt = 1; ; attempt++) {
      const started = Date.now();
      // The last attempt of a GET is cut short by the total deadline; a POST always gets its full timeout.
      const timeoutMs =
        call.method === 'GET' ? Math.max(1, Math.min(this.#timeoutMs, deadline - started)) : this.#timeoutMs;
      // One attempt: the exchange, then its reading.
      let answer: HttpAnswer | undefined;
      let failure: ApiError | undefined;
      try {
        answer = await this.#sender.send({
          method: call.method,
          origin: this.#origin,
          path: call.path,
          headers: call.method === 'POST' ? this.#postHeaders : this.#getHeaders,
          body: call.data === undefined ? undefined : JSON.stringify(call.data),
          timeoutMs,
          maxBodyBytes: MAX_BODY_BYTES,
        });
      } catch (err) {
        // Only the failure's code is read, whatever a transport throws.
        failure = unavailableFromThrown(call.operation, err);
      }
      const outcome: Outcome<T> =
        failure === undefined ? readResponse(call, answer!) : { ok: false, error: failure };
      const waitMs = outcome.ok ? undefined : this.#retryWait(call, outcome.error, attempt, deadline);
      this.#report({
        operation: call.operation,
        method: call.method,
        path: call.route,
        status: outcome.status,
        durationMs: Date.now() - started,
        attempt,
        willRetry: waitMs !== undefined,
        error: outcome.ok ? undefined : errorLabel(outcome.error),
      });
      if (outcome.ok) return outcome.value;
      if (waitMs === undefined) throw outcome.error;
      await sleep(waitMs);
    }
  }

  /** How long to wait before retrying, or undefined when this failure is final. */
  #retryWait(call: Call<unknown>, error: ApiError, attempt: number, deadline: number): number | undefined {
    if (attempt > this.#maxRetries) return undefined;
    let wait = backoffDelay(attempt - 1);
    if (call.method === 'POST') {
      // Refused means the request never left: the only failure after which a POST is safe to repeat.
      if (!(error instanceof VerificationApiUnavailableError && error.code === 'ECONNREFUSED'))
        return undefined;
    } else if (error instanceof VerificationApiError) {
      if (!isRetryableStatus(error.status)) return undefined;
      if (error.retryAfterMs !== undefined) {
        if (error.retryAfterMs > this.#maxRetryAfterMs) return undefined;
        wait = error.retryAfterMs;
      }
    } else if (error.reason === 'bad_response') {
      // An HTML/empty 5xx from a proxy is transient; a garbled 2xx or 4xx is not worth repeating.
      if (error.status === undefined || error.status < 500) return undefined;
    } else if (error.reason !== 'timeout' && error.reason !== 'network') {
      return undefined;
    }
    // Leave the next attempt at least a little time before the deadline.
    return Date.now() + wait + 50 < deadline ? wait : undefined;
  }

  #report(info: ApiRequestInfo): void {
    if (!this.#onRequest) return;
    try {
      this.#onRequest(info);
    } catch {
      // An observer's failure must not change the outcome of the call.
    }
  }
}

function queryString(params: Record<string, string> | undefined): string {
  const query = params ? new URLSearchParams(params).toString() : '';
  return query ? `?${query}` : '';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
