import http, { type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http';
import https from 'node:https';

/** Idle keep-alive sockets are closed after this (or the server's `Keep-Alive: timeout` hint, if shorter),
 * below common server idle timeouts, so that a request rarely lands on a socket the server just closed. */
export const IDLE_SOCKET_MS = 4000;

export interface HttpExchange {
  method: 'GET' | 'POST';
  /** Where to send it: parsed once per client, not per request. */
  origin: HttpOrigin;
  /** Path and query string, appended to the origin's base path. */
  path: string;
  /** Fixed per client and never changed by a transport. */
  headers: Readonly<Record<string, string>>;
  /** Request body, already serialised. */
  body?: string;
  /** Hard limit on the whole exchange, from sending to the last byte of the answer. */
  timeoutMs: number;
  /** Answers longer than this are abandoned (`ERR_BODY_TOO_LARGE`). */
  maxBodyBytes: number;
}

export interface HttpOrigin {
  /** `scheme://host[:port]`, without the base path. */
  origin: string;
  secure: boolean;
  hostname: string;
  port: number | undefined;
  /** Path of the base address without its trailing slash ('' for none). */
  basePath: string;
}

/** Parses an absolute http(s) address into what each exchange needs. */
export function toHttpOrigin(baseUrl: string): HttpOrigin {
  const url = new URL(baseUrl);
  return {
    origin: url.origin,
    secure: url.protocol === 'https:',
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port ? Number(url.port) : undefined,
    basePath: url.pathname.replace(/\/+$/, ''),
  };
}

export interface HttpAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A failed exchange: `code` is Node's (`ECONNREFUSED`, `ECONNRESET`, …) or ours (`ETIMEDOUT`, `ERR_BODY_TOO_LARGE`).
 * Carries neither the request's headers nor its URL, so no credential can travel in it. */
export class HttpTransportError extends Error {
  constructor(readonly code: string) {
    super(`HTTP exchange failed (${code})`);
    this.name = 'HttpTransportError';
  }
}

/**
 * One HTTP exchange over a keep-alive agent, the body read as text. The verification API's client
 * needs nothing more, and axios' general pipeline (config merging, header objects, proxy lookup in
 * the environment, redirects, decompression) cost about two thirds of a status poll's CPU
 * (docs/PERFORMANCE.md). The agents are shared with the `transport: 'axios'` path.
 */
export class HttpTransport {
  readonly httpAgent = new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
  readonly httpsAgent = new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_MS });

  send(exchange: HttpExchange): Promise<HttpAnswer> {
    return new Promise<HttpAnswer>((resolve, reject) => {
      const { origin, body } = exchange;
      const secure = origin.secure;
      // node:http copies the headers it is given, so a GET passes the caller's object as it is.
      const headers: OutgoingHttpHeaders =
        body === undefined
          ? exchange.headers
          : { ...exchange.headers, 'content-length': Buffer.byteLength(body) };
      let settled = false;
      const fail = (code: string): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        request.destroy();
        reject(new HttpTransportError(code));
      };
      const request = (secure ? https : http).request(
        {
          method: exchange.method,
          protocol: secure ? 'https:' : 'http:',
          hostname: origin.hostname,
          port: origin.port,
          path: origin.basePath + exchange.path,
          headers,
          agent: secure ? this.httpsAgent : this.httpAgent,
        },
        (response) => {
          const chunks: Buffer[] = [];
          let length = 0;
          response.on('data', (chunk: Buffer) => {
            length += chunk.length;
            if (length > exchange.maxBodyBytes) fail('ERR_BODY_TOO_LARGE');
            else chunks.push(chunk);
          });
          response.on('error', () => fail('ECONNRESET'));
          response.on('aborted', () => fail('ECONNRESET'));
          response.on('end', () => {
            if (settled) return;
            settled = true;
            clearTimeout(timer);
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: chunks.length === 1 ? chunks[0].toString('utf8') : Buffer.concat(chunks).toString('utf8'),
            });
          });
        },
      );
      const timer = setTimeout(() => fail('ETIMEDOUT'), exchange.timeoutMs);
      request.on('error', (err: NodeJS.ErrnoException) => fail(safeCode(err.code)));
      request.end(body);
    });
  }

  /** Closes the keep-alive connections. */
  close(): void {
    this.httpAgent.destroy();
    this.httpsAgent.destroy();
  }
}

/** A code that can travel in an error message: Node's and undici's codes are upper-case words. */
export function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'ENETWORK';
}
