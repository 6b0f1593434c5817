import { get as httpGet, type IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
/**
 * A minimal Server-Sent Events reader over fetch, as a browser's EventSource would see a stream:
 * messages (`event`, `id`, `data`), comments (`: ping`) and `retry`, and the server's end. It
 * never reconnects: a test sees each stream's own life.
 */
export interface SseMessage {
  event?: string;
  id?: string;
  data?: string;
  retry?: number;
  comment?: string;
}

export interface SseOpen {
  status: number;
  headers: Headers;
  /** The problem document of a refusal (no stream). */
  body?: Record<string, unknown>;
  stream?: SseStream;
}

export class SseStream {
  readonly messages: SseMessage[] = [];
  private buffer = '';
  private ended = false;
  private wake: (() => void) | undefined;
  readonly done: Promise<void>;

  constructor(
    body: ReadableStream<Uint8Array>,
    private readonly controller: AbortController,
  ) {
    this.done = this.read(body);
  }

  /** True once the server ended the stream (or the test closed it). */
  get isEnded(): boolean {
    return this.ended;
  }

  /** The status events so far, their data parsed. */
  statuses(): Record<string, unknown>[] {
    return this.messages
      .filter((m) => m.event === 'status')
      .map((m) => JSON.parse(m.data ?? '{}') as Record<string, unknown>);
  }

  /** Waits (real time, bounded) until `predicate` holds on the messages so far. */
  async until(predicate: (messages: SseMessage[]) => boolean, timeoutMs = 5000): Promise<SseMessage[]> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate(this.messages)) {
      if (this.ended || Date.now() > deadline)
        throw new Error(`SSE: condition not met (${JSON.stringify(this.messages)}, ended: ${this.ended})`);
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        setTimeout(resolve, 25);
      });
    }
    return this.messages;
  }

  /** Waits until `count` status events came. */
  async statusCount(count: number, timeoutMs?: number): Promise<Record<string, unknown>[]> {
    await this.until((m) => m.filter((x) => x.event === 'status').length >= count, timeoutMs);
    return this.statuses();
  }

  /** Waits for the server to end the stream; rejects after `timeoutMs`. */
  async ends(timeoutMs = 5000): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      this.done,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error('SSE: the stream did not end')), timeoutMs);
      }),
    ]).finally(() => clearTimeout(timer));
  }

  /** The client leaves (closes the connection). */
  close(): void {
    this.controller.abort();
  }

  private async read(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    const reader = body.getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        this.buffer += decoder.decode(value, { stream: true });
        this.parse();
      }
    } catch {
      // Aborted by the test, or the connection dropped: the stream is over either way.
    } finally {
      this.ended = true;
      this.wake?.();
    }
  }

  private parse(): void {
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, end);
      this.buffer = this.buffer.slice(end + 2);
      const message: SseMessage = {};
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) message.comment = line.slice(1).trim();
        else {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'event') message.event = value;
          else if (field === 'id') message.id = value;
          else if (field === 'data')
            message.data = message.data === undefined ? value : `${message.data}\n${value}`;
          else if (field === 'retry') message.retry = Number(value);
        }
      }
      this.messages.push(message);
    }
    this.wake?.();
  }
}

/**
 * Opens `url` as an EventSource would (Accept: text/event-stream), on a connection of its own
 * (node:http, no agent): fetch's pool opens a spare connection when a request is aborted, which
 * would hold the server's close for a keep-alive timeout and blur what the module itself leaves open.
 */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseOpen> {
  const controller = new AbortController();
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    const req = httpGet(
      url,
      { headers: { accept: 'text/event-stream', ...headers }, agent: false, signal: controller.signal },
      resolve,
    );
    req.once('error', reject);
  });
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers))
    if (value !== undefined) responseHeaders.set(name, Array.isArray(value) ? value.join(', ') : value);
  const body = Readable.toWeb(res) as ReadableStream<Uint8Array>;
  if (res.statusCode !== 200) {
    const text = await new Response(body).text();
    let parsed: Record<string, unknown> = {};
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: the test looks at the status.
    }
    return { status: res.statusCode ?? 0, headers: responseHeaders, body: parsed };
  }
  return { status: 200, headers: responseHeaders, stream: new SseStream(body, controller) };
}
