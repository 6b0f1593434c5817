import { linkOpener, type LinkEvents, type SubscriberLink } from './redis-subscriber-link.js';
import type { StoreMessageListener } from './verification-store.interface.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';

interface SubscriberConnection {
  subscribe(channel: string, deliver: (message: string) => void): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(graceMs: number): Promise<void>;
}

/** Delays before opening a subscriber connection again after one ended: at once, then 1 s doubling to 8 s. */
const REOPEN_FIRST_RETRY_MS = 1000;
const REOPEN_MAX_DELAY_MS = 8000;

/**
 * The store's side of Redis pub/sub. A connection in subscriber mode can run no other command, so
 * messages arrive on a dedicated connection: a `duplicate()` of the store's client (the host's or
 * its own; the host's is never put in subscriber mode or closed), or on a cluster (ioredis `Cluster`,
 * node-redis `createCluster`), a `duplicate()` of one of its nodes' connections: Redis Cluster forwards
 * every PUBLISH to every node, and the clusters' own pub/sub connection reconnects or moves to another
 * node without telling. It is opened with the first listener and closed with the last one, so a
 * deployment that never streams opens nothing, and a store the host owns is left with no connection
 * of ours once the module is gone. ioredis and node-redis subscribe again by themselves after a
 * reconnection; once subscribed again, the listeners' `onGap` is called (what was published meanwhile
 * is lost): once per gap, never on the first subscribe. A connection that will not reconnect (its
 * strategy gave up: ioredis `retryStrategy` returned null, node-redis `reconnectStrategy` returned
 * false or an Error; a cluster node's ioredis connection, which has none) is replaced: a new one is
 * opened at once, then every 1 s doubling to 8 s until it is subscribed, and `onGap` is called then.
 */
export class RedisSubscriber {
  private readonly channels = new Map<string, Set<StoreMessageListener>>();
  private connection: Promise<SubscriberConnection> | undefined;
  private readonly subscribed = new Map<string, Promise<void>>();
  /** The `onGap` of each listener that gave one. */
  private readonly gaps = new Map<StoreMessageListener, () => void>();

  constructor(
    private readonly client: () => Promise<unknown>,
    private readonly graceMs: number,
  ) {}

  async subscribe(channel: string, listener: StoreMessageListener, onGap?: () => void): Promise<() => void> {
    let listeners = this.channels.get(channel);
    if (!listeners) this.channels.set(channel, (listeners = new Set()));
    const entry: StoreMessageListener = (message) => listener(message);
    listeners.add(entry);
    if (onGap) this.gaps.set(entry, onGap);
    const unsubscribe = (): void => this.remove(channel, entry);
    let done: Promise<void> | undefined;
    try {
      this.connection ??= this.client().then((client) => openSubscriber(client, () => this.gap()));
      const connection = await this.connection;
      done = this.subscribed.get(channel);
      if (!done) {
        done = connection.subscribe(channel, (message) => this.deliver(channel, message));
        this.subscribed.set(channel, done);
      }
      await done;
    } catch (error) {
      // A SUBSCRIBE that failed (a connection being replaced) is sent again by the next listener of the channel.
      if (done !== undefined && this.subscribed.get(channel) === done) this.subscribed.delete(channel);
      unsubscribe();
      throw error;
    }
    return unsubscribe;
  }

  /** Closes the subscriber connection (the store is closing). */
  async close(): Promise<void> {
    this.channels.clear();
    this.gaps.clear();
    await this.disconnect();
  }

  private deliver(channel: string, message: string): void {
    const listeners = this.channels.get(channel);
    if (!listeners) return;
    for (const listener of [...listeners]) {
      try {
        listener(message);
      } catch {
        // One listener's failure never keeps the message from the others.
      }
    }
  }

  /** The connection is back and subscribed again: each listener that asked is told it missed messages. */
  private gap(): void {
    for (const onGap of [...this.gaps.values()]) {
      try {
        onGap();
      } catch {
        // As a message's: one listener's failure never keeps the others from hearing.
      }
    }
  }

  private remove(channel: string, entry: StoreMessageListener): void {
    this.gaps.delete(entry);
    const listeners = this.channels.get(channel);
    if (!listeners?.delete(entry) || listeners.size > 0) return;
    this.channels.delete(channel);
    if (this.channels.size === 0) {
      void this.disconnect();
      return;
    }
    this.subscribed.delete(channel);
    void this.connection?.then((c) => c.unsubscribe(channel)).catch(() => undefined);
  }

  private async disconnect(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    this.subscribed.clear();
    if (!connection) return;
    try {
      await (await connection).close(this.graceMs);
    } catch {
      // It never opened: nothing to close.
    }
  }
}
/** The connection, in hand at once: close() need not wait for its first opening (Redis down, its strategy retrying). */
function openSubscriber(client: unknown, back: () => void): SubscriberConnection {
  return new ReopeningConnection(linkOpener(client), back);
}

/**
 * The subscriber connection, opened again (at once, then 1 s doubling to 8 s until it works) when the one in
 * use ends for good; `back` once the new one is subscribed to every channel, as after a reconnection.
 */
class ReopeningConnection implements SubscriberConnection {
  private readonly deliveries = new Map<string, (message: string) => void>();
  private link: Promise<SubscriberLink>;
  private closed = false;
  private delayMs = 0;
  private wake: (() => void) | undefined;
  /** The link being subscribed to every channel before it is in use. */
  private opening: SubscriberLink | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly open: (events: LinkEvents) => Promise<SubscriberLink>,
    private readonly back: () => void,
  ) {
    this.link = this.connect();
    // Its first opening's failure is each subscribe's (RedisSubscriber), not an unhandled rejection.
    this.link.catch(() => undefined);
  }

  async subscribe(channel: string, deliver: (message: string) => void): Promise<void> {
    this.deliveries.set(channel, deliver);
    await (await this.link).subscribe(channel);
  }

  async unsubscribe(channel: string): Promise<void> {
    this.deliveries.delete(channel);
    await (await this.link).unsubscribe(channel);
  }

  async close(graceMs: number): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    this.wake?.();
    // A link still subscribing may wait for a connection that is not coming: closed, it fails at once.
    await this.opening?.close(0).catch(() => undefined);
    const link = await this.link.catch(() => undefined);
    await link?.close(graceMs);
  }

  /** Opens a link; it is in use (told of), once adopted, until it ends. */
  private async connect(): Promise<SubscriberLink> {
    let state: 'opening' | 'adopted' | 'ended' = 'opening';
    const link = await this.open({
      message: (channel, message) => this.deliveries.get(channel)?.(message),
      back: () => {
        if (state === 'adopted' && !this.closed) this.back();
      },
      ended: () => {
        const adopted = state === 'adopted';
        state = 'ended';
        if (!adopted || this.closed) return;
        void link.close(0).catch(() => undefined);
        this.reopen();
      },
    });
    this.opening = link;
    try {
      // Subscribed to every channel before it is in use (opened again: to those of the link that ended).
      await Promise.all([...this.deliveries.keys()].map((channel) => link.subscribe(channel)));
      if ((state as string) === 'ended')
        throw new VerificationStoreUnavailableError('subscribe', 'the subscriber connection ended');
    } catch (error) {
      await link.close(0).catch(() => undefined);
      throw error;
    } finally {
      if (this.opening === link) this.opening = undefined;
    }
    state = 'adopted';
    return link;
  }

  private reopen(): void {
    const attempt = new Promise<void>((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, this.delayMs);
    }).then(() => {
      if (this.closed) throw new VerificationStoreUnavailableError('subscribe', 'the subscriber is closed');
      return this.connect();
    });
    this.link = attempt;
    attempt.then(
      () => {
        this.delayMs = 0;
        // Closed meanwhile: close() closes it (it awaits this attempt).
        if (!this.closed) this.back();
      },
      () => {
        if (this.closed) return;
        this.delayMs = Math.min(Math.max(this.delayMs * 2, REOPEN_FIRST_RETRY_MS), REOPEN_MAX_DELAY_MS);
        this.reopen();
      },
    );
  }
}
