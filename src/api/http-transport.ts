/**
 * The contract every transport of the API client keeps: one exchange in, the answer as text or a failure
 * carrying a code only.
 */

import { PhoneVerificationError } from '../core/phone-verification.error.js';
import type { IncomingHttpHeaders } from 'node:http';

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
  /** Path of the base address without its trailing slash ('' for none). */
  basePath: string;
}

/** Parses an absolute http(s) address into what each exchange needs. */
export function toHttpOrigin(baseUrl: string): HttpOrigin {
  const url = new URL(baseUrl);
  return {
    origin: url.origin,
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
export class HttpTransportError extends PhoneVerificationError {
  constructor(readonly code: string) {
    super(`HTTP exchange failed (${code})`);
  }
}

/** What sends the client's exchanges: `UndiciTransport` (default) or `AxiosTransport`. */
export interface ExchangeTransport {
  send(exchange: HttpExchange): Promise<HttpAnswer>;
  /** Loads what the transport needs (an optional peer); rejects naming the package to install. */
  ready?(): Promise<unknown>;
  /** Closes the keep-alive connections; a later request opens new ones. */
  close(): void;
}

/** A code that can travel in an error message: Node's and undici's codes are upper-case words. */
export function safeCode(code: unknown): string {
  return typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code) ? code : 'ENETWORK';
}
