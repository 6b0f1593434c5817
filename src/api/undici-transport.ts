import type { IncomingHttpHeaders } from 'node:http';
import { Pool, type Dispatcher } from 'undici';
import {
  HttpTransportError,
  IDLE_SOCKET_MS,
  safeCode,
  type ExchangeTransport,
  type HttpAnswer,
  type HttpExchange,
  type HttpOrigin,
} from './http-transport.js';

/**
 * undici's codes for what Node's sockets (and so axios) report as a reset or a time-out, so that the client's
 * errors (and the `code` hosts see in logs and metrics) read the same whatever the transport.
 */
const UNDICI_CODES: Readonly<Record<string, string>> = {
  UND_ERR_SOCKET: 'ECONNRESET',
  UND_ERR_DESTROYED: 'ECONNRESET',
  UND_ERR_CLOSED: 'ECONNRESET',
  UND_ERR_ABORTED: 'ECONNRESET',
  // No headers or body time-out: the pool turns both off (the exchange's deadline bounds it).
  UND_ERR_CONNECT_TIMEOUT: 'ETIMEDOUT',
  UND_ERR_RES_EXCEEDED_MAX_SIZE: 'ERR_BODY_TOO_LARGE',
};

/**
 * One HTTP exchange over an undici `Pool` (one per origin, keep-alive), dispatched with a handler of our
 * own: no body stream, no `AbortSignal`, no header object copied per request. The contract of every
 * transport (`ExchangeTransport`): a hard deadline on the whole exchange (a timer aborts it, which destroys the socket),
 * answers above `maxBodyBytes` abandoned, no redirects (undici's core follows none), no decompression, and
 * failures as an `HttpTransportError` carrying a code only, never the request's headers or URL (undici's own
 * errors, which can carry socket details, are read for their code and dropped). It costs the host less CPU
 * per status poll than node:http's request, and far less than axios (bench/README.md, "Tools").
 */
export class UndiciTransport implements ExchangeTransport {
  readonly #pools = new Map<string, Pool>();

  send(exchange: HttpExchange): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const handler = new ExchangeHandler(resolve, reject, exchange.maxBodyBytes);
      handler.timer = setTimeout(deadline, exchange.timeoutMs, handler);
      try {
        this.#pool(exchange.origin).dispatch(
          {
            method: exchange.method,
            path: exchange.origin.basePath + exchange.path,
            headers: exchange.headers,
            body: exchange.body,
          },
          handler,
        );
      } catch (err) {
        handler.fail(codeOf(err));
      }
    });
  }

  /** Closes the keep-alive connections; a later request opens new ones. */
  close(): void {
    for (const pool of this.#pools.values()) pool.destroy().catch(() => undefined);
    this.#pools.clear();
  }

  #pool(origin: HttpOrigin): Pool {
    let pool = this.#pools.get(origin.origin);
    if (pool === undefined) {
      pool = new Pool(origin.origin, {
        keepAliveTimeout: IDLE_SOCKET_MS,
        // A server's `Keep-Alive: timeout` hint may shorten the idle time (less undici's 2 s margin), never lengthen it.
        keepAliveMaxTimeout: IDLE_SOCKET_MS,
        // The exchange's own deadline bounds the whole exchange: no per-phase timers on top.
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      this.#pools.set(origin.origin, pool);
    }
    return pool;
  }
}

function deadline(handler: ExchangeHandler): void {
  handler.fail('ETIMEDOUT');
}

/** undici's code for a failure, in node:http's vocabulary where they differ; never more than a code. */
function codeOf(err: unknown): string {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return (typeof code === 'string' ? UNDICI_CODES[code] : undefined) ?? safeCode(code);
}

/** Collects one answer as text; settles once, on the answer's end, a failure or the deadline. */
class ExchangeHandler implements Dispatcher.DispatchHandler {
  timer: NodeJS.Timeout | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #settled = false;
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  #chunks: Buffer[] = [];
  #length = 0;

  constructor(
    private readonly resolve: (answer: HttpAnswer) => void,
    private readonly reject: (err: HttpTransportError) => void,
    private readonly maxBodyBytes: number,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    // The deadline passed while the request waited for a connection: it is not sent at all.
    if (this.#settled) controller.abort(new HttpTransportError('ETIMEDOUT'));
  }

  onResponseStart(
    _controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    this.#status = statusCode;
    this.#headers = headers;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#length += chunk.length;
    if (this.#length > this.maxBodyBytes) this.fail('ERR_BODY_TOO_LARGE');
    else this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.timer);
    const chunks = this.#chunks;
    this.resolve({
      status: this.#status,
      headers: this.#headers,
      body:
        chunks.length === 1
          ? chunks[0].toString('utf8')
          : chunks.length === 0
            ? ''
            : Buffer.concat(chunks).toString('utf8'),
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.fail(codeOf(err));
  }

  fail(code: string): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.timer);
    // Aborting a request in flight destroys its socket, as node:http's request.destroy() does.
    this.#controller?.abort(new HttpTransportError(code));
    this.reject(new HttpTransportError(code));
  }
}
