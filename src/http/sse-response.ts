import type { ServerResponse } from 'node:http';

/**
 * A buffered backlog beyond this means the client stopped reading: the stream is dropped rather
 * than grow in memory (heartbeats alone would never reach it).
 */
const MAX_BACKLOG_BYTES = 64 * 1024;

/**
 * One Server-Sent Events response, written on the platform's own Node response: Express's `res`
 * as it is, Fastify's `reply.raw` after `reply.hijack()` (Fastify then sends nothing itself; the
 * headers its hooks set on the reply, CORS for one, are carried over).
 */
export class SseResponse {
  private constructor(private readonly raw: ServerResponse) {}

  /** Takes over the route's response (Express `res` or Fastify `reply`). */
  static take(response: unknown): SseResponse {
    const reply = response as {
      raw?: ServerResponse;
      hijack?: () => void;
      getHeaders?: () => Record<string, unknown>;
    };
    if (reply.raw && typeof reply.hijack === 'function') {
      const carried = reply.getHeaders?.() ?? {};
      reply.hijack();
      for (const [name, value] of Object.entries(carried))
        if (value !== undefined) reply.raw.setHeader(name, value as string | string[]);
      return new SseResponse(reply.raw);
    }
    return new SseResponse(response as ServerResponse);
  }

  get closed(): boolean {
    return this.raw.destroyed || this.raw.writableEnded || this.raw.socket?.destroyed === true;
  }

  /** Calls `listener` once the connection is gone (client left, or end() was called). */
  onClose(listener: () => void): void {
    // `on`, not `once`: 'close' comes once anyway, and once's wrapper would cost memory per stream.
    this.raw.on('close', () => {
      // A client that left may leave its half of the connection open: drop it, or the server's close would wait on it.
      if (!this.raw.writableEnded) this.raw.destroy();
      listener();
    });
  }

  /** Sends the head and the client's reconnection delay; nothing is buffered by proxies from here on. */
  open(retryMs: number): void {
    this.raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      'X-Accel-Buffering': 'no',
    });
    this.write(`retry: ${retryMs}\n\n`);
  }

  /** One `status` event. `data` is a single line of JSON. */
  event(id: number, data: string): void {
    this.write(`event: status\nid: ${id}\ndata: ${data}\n\n`);
  }

  ping(): void {
    this.write(': ping\n\n');
  }

  end(): void {
    if (!this.closed) this.raw.end();
  }

  private write(chunk: string): void {
    if (this.closed) return;
    if (this.raw.writableLength > MAX_BACKLOG_BYTES) {
      this.raw.destroy();
      return;
    }
    this.raw.write(chunk);
    // Compression middleware (Express `compression`) holds output until flushed.
    (this.raw as { flush?: () => void }).flush?.();
  }
}
