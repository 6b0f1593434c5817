import type { VerificationClientError } from './errors.js';
import type { EventSourceFactory, EventSourceLike, RoutesTransport } from './transport.js';
import type { StatusAnswer } from './types.js';

const CLOSED = 2;
const MAX_BACKOFF_MS = 30_000;

export interface FollowerHooks {
  onStatus(answer: StatusAnswer): void;
  /** A refusal that ends following (`not_found`). */
  onLost(error: VerificationClientError): void;
  onConnection(kind: 'stream' | 'polling'): void;
}

/** A wait that doubles with each failure, never past 30 s, with jitter so that clients spread out. */
export function backoffMs(failures: number, baseMs: number, random: () => number): number {
  const ceiling = Math.min(MAX_BACKOFF_MS, Math.max(1000, baseMs) * 2 ** Math.max(0, failures - 1));
  return Math.round(ceiling * (0.5 + random() / 2));
}

/**
 * Follows one verification's status: over the status stream when the browser has EventSource and
 * the server has the route, else by polling at `poll_interval_ms`. Never both at once.
 */
export class StatusFollower {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private source: EventSourceLike | null = null;
  private failures = 0;
  private stopped = false;

  constructor(
    private readonly transport: RoutesTransport,
    private readonly id: string,
    public intervalMs: number,
    private readonly signal: AbortSignal,
    private readonly hooks: FollowerHooks,
    private readonly random: () => number,
    /** The query the status reads carry (the journey token, once there is one). */
    private readonly query: () => string = () => '',
  ) {}

  start(eventSource: EventSourceFactory | null): void {
    if (eventSource) this.openStream(eventSource);
    else this.schedule(this.intervalMs);
  }

  /** Polls now instead of at the next interval; nothing while the stream is open (it says every change). */
  pollNow(): void {
    if (!this.source && !this.stopped) this.schedule(0);
  }

  /**
   * A read now (and, over a stream, one more an interval later), stream or not: something happened
   * that the server may learn only when asked (a session that moved on, the page knows the clock moved
   * or the user acted on the phone).
   */
  refresh(): void {
    if (!this.source) return this.pollNow();
    if (this.stopped) return;
    void this.readOnce();
    // The server asks the API at most once per interval: a change just after its last look shows then.
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.readOnce(), this.intervalMs);
  }

  private async readOnce(): Promise<void> {
    try {
      const answer = await this.read();
      if (!this.stopped) this.hooks.onStatus(answer);
    } catch (error) {
      if (!this.stopped && (error as VerificationClientError).code === 'not_found')
        this.hooks.onLost(error as VerificationClientError);
    }
  }

  private read(): Promise<StatusAnswer> {
    return this.transport.request<StatusAnswer>(
      `/status/${encodeURIComponent(this.id)}${this.query()}`,
      this.signal,
    );
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.source?.close();
    this.source = null;
  }

  private openStream(eventSource: EventSourceFactory): void {
    let received = false;
    let source: EventSourceLike;
    try {
      source = eventSource(
        this.transport.url(`/status/${encodeURIComponent(this.id)}/events${this.query()}`),
      );
    } catch {
      return this.schedule(0);
    }
    this.source = source;
    this.hooks.onConnection('stream');
    source.addEventListener('status', (event) => {
      received = true;
      let answer: StatusAnswer | null;
      try {
        answer = JSON.parse(String(event.data)) as StatusAnswer;
      } catch {
        answer = null;
      }
      if (answer && !this.stopped) this.hooks.onStatus(answer);
    });
    source.addEventListener('error', () => {
      // Before the first message: no route (404), too many streams (429) or a proxy in the way.
      // After it, EventSource reconnects by itself unless the server refused the reconnection.
      if (this.stopped || (received && source.readyState !== CLOSED)) return;
      source.close();
      this.source = null;
      this.schedule(0);
    });
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.hooks.onConnection('polling');
    this.timer = setTimeout(() => void this.poll(), delayMs);
  }

  private async poll(): Promise<void> {
    try {
      const answer = await this.read();
      if (this.stopped) return;
      this.failures = 0;
      this.intervalMs = answer.poll_interval_ms || this.intervalMs;
      this.hooks.onStatus(answer);
      this.schedule(this.intervalMs);
    } catch (error) {
      if (this.stopped || this.signal.aborted) return;
      const refusal = error as VerificationClientError;
      if (refusal.code === 'not_found') return this.hooks.onLost(refusal);
      this.failures += 1;
      this.schedule(refusal.retryAfterMs ?? backoffMs(this.failures, this.intervalMs, this.random));
    }
  }
}
