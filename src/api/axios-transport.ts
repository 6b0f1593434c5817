import type { HttpService } from '@nestjs/axios';
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
 * its code and dropped.
 */
export class AxiosTransport implements ExchangeTransport {
  readonly #httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  readonly #httpsAgent = new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

  constructor(private readonly httpService: HttpService) {}

  async send(exchange: HttpExchange): Promise<HttpAnswer> {
    const controller = new AbortController();
    // A hard deadline for the whole exchange: axios' own `timeout` only bounds socket inactivity.
    const timer = setTimeout(() => controller.abort(), exchange.timeoutMs);
    try {
      // Called directly: the HttpService's Observable wrapper costs a CancelToken and a CanceledError per request.
      const response = await this.httpService.axiosRef.request<string>({
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
      const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
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
