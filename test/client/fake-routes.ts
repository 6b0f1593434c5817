import { afterEach, beforeEach, jest } from '@jest/globals';
import {
  VerificationClient,
  type EventSourceLike,
  type FetchLike,
  type RequestInitLike,
  type VerificationClientOptions,
} from '../../src/client/index.js';

export interface FakeReply {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

/**
 * The client routes as a fake transport: queued answers per route, every request recorded, and a
 * server clock `offsetMs` away from the device's (sent in each answer's Date header).
 */
export class FakeRoutes {
  offsetMs = 0;
  readonly requests: { route: string; body: unknown; init: RequestInitLike; url: string }[] = [];
  private readonly queues = new Map<string, FakeReply[]>();
  readonly streams: FakeEventSource[] = [];

  serverNow(): number {
    return Date.now() + this.offsetMs;
  }

  /** Answers for `route` (`POST /start`, `GET /status`) from now on, in turn; the last one repeats. */
  on(route: string, ...replies: FakeReply[]): this {
    this.queues.set(route, replies);
    return this;
  }

  count(route: string): number {
    return this.requests.filter((r) => r.route === route).length;
  }

  fetch: FetchLike = async (url, init) => {
    const path = url.replace(/^\/verification/, '').replace(/^\/status\/.*/, '/status');
    const route = `${init.method} ${path}`;
    this.requests.push({ route, body: init.body ? JSON.parse(init.body) : undefined, init, url });
    if (init.signal.aborted) throw new DOMException('aborted', 'AbortError');
    const queue = this.queues.get(route) ?? [];
    const reply = queue.length > 1 ? queue.shift()! : queue[0];
    if (!reply) throw new TypeError(`no answer queued for ${route}`);
    const headers: Record<string, string> = {
      date: new Date(this.serverNow()).toUTCString(),
      ...Object.fromEntries(Object.entries(reply.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    };
    return {
      ok: reply.status < 300,
      status: reply.status,
      headers: { get: (name: string) => headers[name.toLowerCase()] ?? null },
      json: async () => reply.body,
    };
  };

  eventSource = (url: string): EventSourceLike => {
    const source = new FakeEventSource(url);
    this.streams.push(source);
    return source;
  };
}

export class FakeEventSource implements EventSourceLike {
  readyState = 0;
  closed = false;
  private readonly listeners = new Map<string, ((event: { data?: unknown }) => void)[]>();

  constructor(readonly url: string) {}

  addEventListener(type: string, listener: (event: { data?: unknown }) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.closed = true;
    this.readyState = 2;
  }

  push(answer: unknown): void {
    this.readyState = 1;
    for (const listener of this.listeners.get('status') ?? []) listener({ data: JSON.stringify(answer) });
  }

  fail(readyState = 2): void {
    this.readyState = readyState;
    for (const listener of this.listeners.get('error') ?? []) listener({});
  }
}

/** A start or status answer of the contract, `expiresInS` seconds ahead on the server's clock. */
export function answer(
  routes: FakeRoutes,
  fields: Record<string, unknown> = {},
  expiresInS = 300,
): Record<string, unknown> {
  return {
    verification_id: 'VID-1',
    method: 'sms',
    status: 'sent',
    phone_number: '+79123456789',
    expires_at: new Date(routes.serverNow() + expiresInS * 1000).toISOString(),
    resend_available_at: new Date(routes.serverNow() + 60_000).toISOString(),
    poll_interval_ms: 2500,
    awaiting_code: true,
    resumed: false,
    code_length: 6,
    ...fields,
  };
}

export function problem(status: number, errorCode: string, extra: Record<string, unknown> = {}): FakeReply {
  return {
    status,
    body: {
      type: 'about:blank',
      title: errorCode,
      status,
      detail: errorCode,
      error_code: errorCode,
      ...extra,
    },
  };
}

/** A Map-backed storage, as sessionStorage. */
export class MemoryStorage {
  readonly items = new Map<string, string>();
  getItem = (key: string): string | null => this.items.get(key) ?? null;
  setItem = (key: string, value: string): void => void this.items.set(key, value);
  removeItem = (key: string): void => void this.items.delete(key);
}

/**
 * The journey fields of a start or status answer (issue 18): the methods tried, those `POST /switch`
 * may move to, and when "try another way" should be offered (`fallbackInS` ahead on the server's clock).
 */
export function journey(
  routes: FakeRoutes,
  tried: string[],
  switchTo: string[],
  fallbackInS: number | null,
): Record<string, unknown> {
  return {
    method: tried.at(-1),
    methods_tried: tried,
    switch_methods: switchTo,
    ...(fallbackInS === null
      ? {}
      : { fallback_available_at: new Date(routes.serverNow() + fallbackInS * 1000).toISOString() }),
  };
}

/** `POST /cancel`'s answer (200). */
export function canceled(verificationId = 'VID-1'): FakeReply {
  return { status: 200, body: { verification_id: verificationId, status: 'canceled' } };
}

/**
 * Per test: fresh fake routes and storage on fake timers (12:00 UTC), and clients over them (polling,
 * no jitter, no WebOTP) that are disposed after the test. Call inside a `describe`.
 */
export function clientHarness(): {
  readonly routes: FakeRoutes;
  readonly storage: MemoryStorage;
  client(options?: VerificationClientOptions): VerificationClient;
  /** New routes for the rest of the test (clients made from now on use them). */
  freshRoutes(): FakeRoutes;
} {
  let routes: FakeRoutes;
  let storage: MemoryStorage;
  const clients: VerificationClient[] = [];
  beforeEach(() => {
    jest.useFakeTimers({ now: Date.parse('2026-11-23T12:00:00Z') });
    routes = new FakeRoutes();
    storage = new MemoryStorage();
  });
  afterEach(() => {
    for (const client of clients.splice(0)) client.dispose();
    jest.useRealTimers();
  });
  return {
    get routes() {
      return routes;
    },
    get storage() {
      return storage;
    },
    freshRoutes() {
      routes = new FakeRoutes();
      return routes;
    },
    client(options: VerificationClientOptions = {}) {
      const made = new VerificationClient({
        fetch: routes.fetch,
        eventSource: null,
        storage,
        random: () => 0,
        webOtp: false,
        ...options,
      });
      clients.push(made);
      return made;
    },
  };
}
