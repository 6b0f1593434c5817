import type { StartInput } from './client-options.js';
import type { CancelAnswer, CheckAnswer, StartAnswer, StatusAnswer } from './types.js';
import type { VerificationClientOptions } from './client-options.js';
import { parseRetryAfter, VerificationClientError, type VerificationProblem } from './errors.js';

/** The parts of `fetch` the client uses (the browser's by default; a fake in tests). */
export interface RequestInitLike {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Not set by the routes' calls: fetch's default, `same-origin` (the stream's reader sets it). */
  credentials?: 'same-origin';
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

  /** `POST /start`; a graded answer is followed once (heldOver). */
  start(input: StartInput, signal: AbortSignal): Promise<StartAnswer> {
    // Undefined fields drop out of the JSON: the server refuses unknown ones (an older one `device`).
    const body = { phone_number: input.phoneNumber, device: input.device, purpose: input.purpose };
    return heldOver(
      (method) => this.request<StartAnswer>('/start', signal, { ...body, method }),
      input.method,
    );
  }

  status(id: string, token: string | undefined, signal: AbortSignal): Promise<StatusAnswer> {
    return this.request<StatusAnswer>(`/status/${encodeURIComponent(id)}${tokenQuery(token)}`, signal);
  }

  /** `POST /check` with the code as typed, less spaces and dashes. */
  check(id: string, code: string, token: string | undefined, signal: AbortSignal): Promise<CheckAnswer> {
    const body = { verification_id: id, code: code.replace(/[\s-]/g, ''), journey_token: token };
    return this.request<CheckAnswer>('/check', signal, body);
  }

  /** `POST /switch` to `method` (or the policy's next); a graded answer is followed once (heldOver). */
  switch(id: string, method: string | undefined, token: string | undefined, signal: AbortSignal) {
    const body = { verification_id: id, journey_token: token };
    return heldOver(
      (named) => this.request<StartAnswer>('/switch', signal, { ...body, method: named }),
      method,
    );
  }

  /** `POST /cancel`, not aborted by a start that follows: the cancel is for this verification, whatever comes next. */
  cancel(id: string, token: string | undefined): Promise<CancelAnswer> {
    return this.request<CancelAnswer>('/cancel', new AbortController().signal, {
      verification_id: id,
      journey_token: token,
    });
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

/** The journey token as the GET routes take it (`?journey_token=`), or nothing before a switch. */
export function tokenQuery(token: string | undefined): string {
  return token ? `?journey_token=${encodeURIComponent(token)}` : '';
}

/**
 * Runs `send` with `method`; a graded answer (409 `method_held`: this number is offered only methods
 * charged on proof for now) is followed once, with the first method it offers: the page then asks
 * the user to call a number, or to open the bot, instead of waiting for a code.
 */
export async function heldOver<T>(
  send: (method: string | undefined) => Promise<T>,
  method: string | undefined,
): Promise<T> {
  try {
    return await send(method);
  } catch (error) {
    const offered = (error as VerificationClientError).problem?.offered_methods;
    const next = Array.isArray(offered) && typeof offered[0] === 'string' ? offered[0] : undefined;
    if ((error as VerificationClientError).code !== 'method_held' || next === undefined || next === method)
      throw error;
    return send(next);
  }
}

/**
 * The client's way to the routes: its fetch (the page's unless given), and how a status stream is
 * opened: the given factory, else over fetch when headers must go with it (EventSource sends none),
 * else the browser's EventSource, else none (polling).
 */
export function routesFor(options: VerificationClientOptions): {
  transport: RoutesTransport;
  eventSource: EventSourceFactory | null;
} {
  const fetchImpl = options.fetch ?? browser.fetch?.bind(globalThis);
  if (!fetchImpl) throw new VerificationClientError('fetch_unavailable', 0);
  const { headers: given } = options;
  // Fixed headers (an object), or asked for on each call (a function: a token that changes).
  const headers = typeof given === 'object' ? () => given : given;
  const transport = new RoutesTransport(
    options.baseUrl ?? '/verification',
    fetchImpl,
    options.serverNow,
    headers,
  );
  const NativeEventSource = browser.EventSource;
  const eventSource =
    options.eventSource !== undefined
      ? options.eventSource
      : headers
        ? lazyFetchEventSource(fetchImpl, headers)
        : NativeEventSource
          ? (url: string) => new NativeEventSource(url)
          : null;
  return { transport, eventSource };
}

/**
 * The stream read with fetch, loaded on its first use: only a page whose routes need headers (a
 * bearer token) downloads it, so the element's first load stays within its size budget. Listeners
 * and a `close()` given before it loaded are handed on once it has.
 */
function lazyFetchEventSource(
  fetchImpl: FetchLike,
  headers: () => Record<string, string>,
): EventSourceFactory {
  return (url) => {
    let inner: EventSourceLike | undefined;
    let closed = false;
    const early: [string, (event: { data?: unknown }) => void][] = [];
    void import('./fetch-event-source.js').then(
      ({ fetchEventSource }) => {
        if (closed) return;
        inner = fetchEventSource(fetchImpl, headers)(url);
        for (const [type, listener] of early) inner.addEventListener(type, listener);
      },
      () => {
        // Not loaded (a deploy removed the chunk, the network failed): a stream that cannot open, so the
        // follower polls instead of waiting for it.
        if (closed) return;
        closed = true;
        for (const [type, listener] of early) if (type === 'error') listener({});
      },
    );
    return {
      get readyState() {
        return inner?.readyState ?? (closed ? 2 : 0);
      },
      addEventListener(type, listener) {
        if (inner) inner.addEventListener(type, listener);
        else early.push([type, listener]);
      },
      close() {
        closed = true;
        inner?.close();
      },
    };
  };
}
