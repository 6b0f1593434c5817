import type { EventSourceFactory, EventSourceLike, FetchLike } from './transport.js';

const CONNECTING = 0;
const OPEN = 1;
const CLOSED = 2;

type Listener = (event: { data?: unknown }) => void;

/**
 * The status stream read with `fetch`, for hosts whose routes need headers an `EventSource` cannot
 * send (`Authorization: Bearer …`): the same `text/event-stream`, the host's headers on every
 * request, and EventSource's behaviour where the follower relies on it (an `error` with `CLOSED`
 * when the server refuses; when an open stream ends, an `error` with `CONNECTING`, then a reconnection
 * after `retry` ms). So a bearer-token
 * app keeps the stream instead of falling back to polling.
 */
export function fetchEventSource(
  fetchImpl: FetchLike,
  headers: () => Record<string, string>,
): EventSourceFactory {
  return (url) => new FetchEventSource(url, fetchImpl, headers);
}

class FetchEventSource implements EventSourceLike {
  readyState = CONNECTING;
  private readonly listeners = new Map<string, Listener[]>();
  private readonly controller = new AbortController();
  private retryMs = 3000;
  private lastId: string | undefined;

  constructor(
    private readonly url: string,
    private readonly fetchImpl: FetchLike,
    private readonly headers: () => Record<string, string>,
  ) {
    void this.connect();
  }

  addEventListener(type: string, listener: Listener): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener]);
  }

  close(): void {
    this.readyState = CLOSED;
    this.controller.abort();
  }

  private async connect(): Promise<void> {
    try {
      const response = await this.fetchImpl(this.url, {
        method: 'GET',
        headers: {
          ...this.headers(),
          accept: 'text/event-stream',
          ...(this.lastId === undefined ? {} : { 'last-event-id': this.lastId }),
        },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: this.controller.signal,
      });
      if (this.readyState === CLOSED) return; // closed while connecting
      // Refused (401, 404, 429) or not a stream (no body, or another type: a single-page app's catch-all
      // or a proxy's page answering 200 with HTML): closed for good, as EventSource does.
      const type = response.headers.get('content-type');
      const stream = type === null || /^\s*text\/event-stream\s*(;|$)/i.test(type);
      const reader = response.ok && stream ? response.body?.getReader() : undefined;
      if (!reader) return this.fail();
      this.readyState = OPEN;
      await this.read(reader);
    } catch {
      return this.fail();
    }
    // The server ended an open stream (its longest life, a shutdown, a proxy cutting it): an `error` with
    // CONNECTING, then a reconnection, as EventSource does. A follower that had no message yet polls instead.
    if (this.readyState === CLOSED) return;
    this.readyState = CONNECTING;
    this.emit('error', undefined);
    if (this.readyState === CLOSED) return;
    setTimeout(() => void (this.readyState === CLOSED || this.connect()), this.retryMs);
  }

  private async read(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = '';
    let event = 'message';
    let data: string[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (this.readyState === CLOSED) return;
      if (!done) buffer += decoder.decode(value, { stream: true });
      // A CR that ends a chunk may be the first half of a CRLF: it waits for the next chunk, or the end.
      const lines = buffer.split(done ? /\r\n|\r|\n/ : /\r\n|\r(?!$)|\n/);
      buffer = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') {
          // A blank line ends a message.
          if (data.length > 0) this.emit(event, data.join('\n'));
          [event, data] = ['message', []];
          continue;
        }
        const colon = line.indexOf(':');
        if (colon === 0) continue; // a comment (`: ping`)
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = text;
        else if (field === 'data') data.push(text);
        else if (field === 'id') this.lastId = text;
        else if (field === 'retry' && /^\d+$/.test(text)) this.retryMs = Number(text);
      }
      if (done) return;
    }
  }

  private fail(): void {
    if (this.readyState === CLOSED) return;
    this.readyState = CLOSED;
    this.emit('error', undefined);
  }

  private emit(type: string, data: unknown): void {
    for (const listener of this.listeners.get(type) ?? []) listener({ data });
  }
}
