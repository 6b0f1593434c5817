import {
  Inject,
  Injectable,
  type BeforeApplicationShutdown,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import { StatusWatch } from '../verification/status-watch.js';
import type { StatusWatcher } from '../verification/status-watcher.js';
import type { StatusView } from '../verification/verification.views.js';
import { clientIp } from '../core/client-request.js';
import { SseResponse } from './sse-response.js';
import { VerificationStatusResponse } from './verification.responses.js';

/** One open stream: its response and what it is shown. */
interface StatusStream {
  readonly response: SseResponse;
  readonly watcher: StatusWatcher;
}

/**
 * The HTTP side of the status streams (`GET /{prefix}/status/:id/events`): each stream is a
 * server-sent-events response that writes what its watcher gives, one status answer per event, and
 * ends with it. The watchers come from StatusWatch (verification/status-watch.ts: the caps, one read
 * per change, the follower), which the hub closes at shutdown. One heartbeat
 * timer pings every stream and ends those past their time.
 */
@Injectable()
export class StatusStreamHub implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly streams = new Set<StatusStream>();
  private heartbeat: ReturnType<typeof setInterval> | undefined;

  /** @internal Made by the module (dependency injection), never by a host. */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    private readonly watch: StatusWatch,
  ) {}

  /** Streams open on this instance. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Opens a stream and sends the current status answer. Refusals (404 not_found, 429
   * rate_limit_exceeded, 503) are thrown before anything is written, as the status route's are.
   */
  async open(
    verificationId: string,
    owner: string | undefined,
    request: unknown,
    response: unknown,
    journeyToken?: string,
  ): Promise<void> {
    const ip = clientIp(request);
    const watcher = await this.watch.open({ verificationId, owner, journeyToken, request, ip });
    let stream: StatusStream;
    try {
      stream = { response: SseResponse.take(response), watcher };
    } catch (error) {
      watcher.close();
      throw error;
    }
    stream.response.onClose(() => this.remove(stream));
    // The client may have left while the first answer was read.
    if (stream.response.closed) {
      this.remove(stream);
      return;
    }
    this.streams.add(stream);
    this.startHeartbeat();
    // Reconnection after an early end (maximum duration, shutdown): at the pace a poll would have had.
    stream.response.open(watcher.spec.first.pollIntervalMs);
    void this.relay(stream, await watcher.next());
  }

  /**
   * Ends every stream before Nest closes the HTTP server (which waits for open responses, so an
   * open stream would hold the shutdown forever).
   */
  beforeApplicationShutdown(): void {
    this.onApplicationShutdown();
  }

  /** The same, for a context whose server was closed by other means; idempotent. */
  onApplicationShutdown(): void {
    this.watch.close();
    for (const stream of [...this.streams]) stream.response.end();
    this.streams.clear();
    this.stopHeartbeat();
  }

  /** Writes the first answer and each one the watcher gives after it; ends the stream after the last. */
  private async relay({ response, watcher }: StatusStream, first: StatusView | undefined): Promise<void> {
    let lastId = 0;
    for (let view = first; view; view = await watcher.next())
      response.event(++lastId, JSON.stringify(VerificationStatusResponse.from(view)));
    response.end();
  }

  /** The client left or the stream ended. */
  private remove(stream: StatusStream): void {
    stream.watcher.close();
    if (this.streams.delete(stream) && this.streams.size === 0) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeat) return;
    this.heartbeat = setInterval(() => this.beat(), this.options.statusStream.heartbeatMs);
    this.heartbeat.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = undefined;
  }

  /** One timer for every stream: a ping each, and the end of those past their time. */
  private beat(): void {
    const now = performance.now();
    for (const { response, watcher } of [...this.streams]) {
      if (now >= watcher.endsAt) response.end();
      else response.ping();
    }
  }
}
