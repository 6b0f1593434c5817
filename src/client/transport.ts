import { parseRetryAfter, VerificationClientError, type VerificationProblem } from './errors.js';

/** The parts of `fetch` the client uses (the browser's by default; a fake in tests). */
export interface RequestInitLike {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  credentials: 'same-origin';
  cache: 'no-store';
  signal: AbortSignal;
}
export interface ResponseLike {
  readonly ok: boolean;
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  json(): Promise<unknown>;
  /** The body as a stream (the status stream read with fetch). */
  readonly body?: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> } } | null;
}
export type FetchLike = (url: string, init: RequestInitLike) => Promise<ResponseLike>;

/** The part of `EventSource` the client uses. */
export interface EventSourceLike {
  readonly readyState: number;
  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void;
  close(): void;
}
export type EventSourceFactory = (url: string) => EventSourceLike;

/** The browser globals the client may use, none of them required. */
export interface BrowserGlobals {
  fetch?: FetchLike;
  EventSource?: new (url: string) => EventSourceLike;
  sessionStorage?: {
    getItem(key: string): string | null;
    setItem(key: string, value: string): void;
    removeItem(key: string): void;
  };
  navigator?: {
    credentials?: { get(options: object): Promise<unknown> };
    userAgent?: string;
    userAgentData?: { mobile?: boolean };
  };
  OTPCredential?: unknown;
}
export const browser = globalThis as unknown as BrowserGlobals;

/**
 * The client routes over HTTP, and the server's clock: the offset from the `Date` header of each
 * answer, so that countdowns end when the server says, whatever the device's clock says.
 */
export class RoutesTransport {
  private offsetMs = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly fetchImpl: FetchLike,
    private readonly clock?: () => number,
    /** The host's own headers for every call (a bearer token). */
    private readonly extraHeaders: () => Record<string, string> = () => ({}),
  ) {}

  now(): number {
    return this.clock ? this.clock() : Date.now() + this.offsetMs;
  }

  url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  async request<T>(path: string, signal: AbortSignal, body?: object): Promise<T> {
    const sentAt = Date.now();
    let response: ResponseLike;
    try {
      response = await this.fetchImpl(this.url(path), {
        method: body ? 'POST' : 'GET',
        headers: {
          ...this.extraHeaders(),
          ...(body ? { 'content-type': 'application/json' } : {}),
          accept: 'application/json',
        },
        body: body ? JSON.stringify(body) : undefined,
        credentials: 'same-origin',
        cache: 'no-store',
        signal,
      });
    } catch (error) {
      if (signal.aborted) throw error;
      throw new VerificationClientError('network_error', 0, {}, null, this.now());
    }
    this.syncClock(response.headers.get('date'), sentAt);
    let parsed: unknown;
    try {
      parsed = await response.json();
    } catch {
      parsed = null;
    }
    if (response.ok && parsed && typeof parsed === 'object') return parsed as T;
    const problem = (parsed && typeof parsed === 'object' ? parsed : {}) as VerificationProblem;
    const code =
      typeof problem.error_code === 'string'
        ? problem.error_code
        : response.status === 429
          ? 'rate_limit_exceeded'
          : response.status >= 500
            ? 'service_unavailable'
            : 'unexpected_response';
    const now = this.now();
    throw new VerificationClientError(
      code,
      response.status,
      problem,
      parseRetryAfter(response.headers.get('retry-after'), now),
      now,
    );
  }

  /** `Date` has a one-second resolution: the offset moves only when it is off by more than that. */
  private syncClock(date: string | null, sentAt: number): void {
    const serverAt = date ? Date.parse(date) : NaN;
    if (Number.isNaN(serverAt)) return;
    const localAt = (sentAt + Date.now()) / 2;
    const offset = serverAt + 500 - localAt;
    if (Math.abs(offset - this.offsetMs) > 1000) this.offsetMs = offset;
  }
}
