import { isModuleNotFound } from '../core/module-not-found.js';
import { VerificationOptionsError } from '../core/option-rules.js';
import http, { type IncomingHttpHeaders } from 'node:http';
import https from 'node:https';
import {
  HttpTransportError,
  IDLE_SOCKET_MS,
  safeCode,
  type ExchangeTransport,
  type HttpAnswer,
  type HttpExchange,
} from './http-transport.js';

/**
 * What the transport calls: the `axiosRef` of an HttpService over an axios instance of its own. Declared
 * here rather than imported from axios' types, so that no declaration of the package names an optional peer.
 */
interface AxiosRequester {
  request<T>(config: Record<string, unknown>): Promise<{ status: number; headers: unknown; data: T }>;
}

/** Whose option chose the transport: the module's (`api.transport`) or a standalone client's (`transport`). */
export type TransportOwner = 'VerificationModule' | 'VerificationApiClient';

/**
 * axios and @nestjs/axios are optional peers, needed only for this transport: imported on first use (or at
 * boot, through `ready()`), so that a host on the default transport installs neither and never loads them.
 */
async function loadAxios(owner: TransportOwner): Promise<AxiosRequester> {
  try {
    // One after the other: jest's ESM loader fails two concurrent imports that share a module (axios).
    const { default: axios } = await import('axios');
    const { HttpService } = await import('@nestjs/axios');
    // An HttpService of our own over a fresh instance, as HttpModule.register() makes (not the shared default).
    return new HttpService(axios.create()).axiosRef;
  } catch (error) {
    if (!isModuleNotFound(error)) throw error;
    throw new VerificationOptionsError(
      // The module's option is `api.transport`; a standalone client's, `transport`.
      owner === 'VerificationModule' ? 'api.transport' : 'transport',
      "is 'axios' but axios or @nestjs/axios is not installed: run `npm i axios @nestjs/axios`, or leave the default 'undici'",
      owner,
    );
  }
}

/** Bodies are serialised and parsed by the client itself. */
const NO_TRANSFORM: [] = [];

/**
 * `api.transport: 'axios'`: each exchange through an `HttpService` whose axios instance is the client's own
 * (the module's `HttpModule.register()`, or `axios.create()` outside Nest), never the default instance a host
 * shares: a host's global interceptors, and anything else installed on that instance, would see every
 * request of ours and its `Authorization` header. axios' Node adapter is named on each request, so a default
 * adapter a host set on the library is not used either. What this transport is for: axios honours
 * `HTTP(S)_PROXY`/`NO_PROXY` from the environment, which undici's pool does not. The same contract as
 * `UndiciTransport`; an axios error (which carries the request config, and so the credentials) is read for
 * its code and dropped. axios itself is loaded on first use (`loadAxios`).
 */
export class AxiosTransport implements ExchangeTransport {
  readonly #httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  readonly #httpsAgent = new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

  #axios: Promise<AxiosRequester> | undefined;

  /** @param owner whose option chose this transport, for the message when axios is missing. */
  constructor(private readonly owner: TransportOwner) {}

  /** Loads axios; rejects with a VerificationOptionsError naming the packages to install. */
  ready(): Promise<AxiosRequester> {
    this.#axios ??= loadAxios(this.owner);
    return this.#axios;
  }

  async send(exchange: HttpExchange): Promise<HttpAnswer> {
    const axios = await this.ready();
    const controller = new AbortController();
    // A hard deadline for the whole exchange: axios' own `timeout` only bounds socket inactivity.
    const timer = setTimeout(() => controller.abort(), exchange.timeoutMs);
    try {
      // Called directly: the HttpService's Observable wrapper costs a CancelToken and a CanceledError per request.
      const response = await axios.request<string>({
        adapter: 'http',
        method: exchange.method,
        url: exchange.origin.origin + exchange.origin.basePath + exchange.path,
        data: exchange.body,
        headers: exchange.headers,
        timeout: exchange.timeoutMs,
        signal: controller.signal,
        httpAgent: this.#httpAgent,
        httpsAgent: this.#httpsAgent,
        validateStatus: null,
        responseType: 'text',
        transformRequest: NO_TRANSFORM,
        transformResponse: NO_TRANSFORM,
        maxRedirects: 0,
        maxContentLength: exchange.maxBodyBytes,
        maxBodyLength: exchange.maxBodyBytes,
        transitional: { clarifyTimeoutError: true },
      });
      return {
        status: response.status,
        headers: response.headers as IncomingHttpHeaders,
        body: typeof response.data === 'string' ? response.data : '',
      };
    } catch (err) {
      if (controller.signal.aborted) throw new HttpTransportError('ETIMEDOUT');
      const { code, message } = (typeof err === 'object' && err !== null ? err : {}) as {
        code?: unknown;
        message?: unknown;
      };
      // axios names an answer past maxContentLength only in its message (code ERR_BAD_RESPONSE, as for a
      // broken stream): the same failure is ERR_BODY_TOO_LARGE on every transport.
      if (typeof message === 'string' && message.startsWith('maxContentLength size of'))
        throw new HttpTransportError('ERR_BODY_TOO_LARGE');
      throw new HttpTransportError(safeCode(code));
    } finally {
      clearTimeout(timer);
    }
  }

  close(): void {
    this.#httpAgent.destroy();
    this.#httpsAgent.destroy();
  }
}
