import { randomUUID } from 'node:crypto';
import { VerificationOptionsError } from '../core/option-rules.js';
import { MAX_TIMER_MS } from './redis-connection.js';
import { linkOpener, type LinkEvents, type SubscriberLink } from './redis-subscriber-link.js';
import type { StoreMessageListener } from './verification-store.interface.js';
import { VerificationStoreUnavailableError } from './store-unavailable.error.js';

export interface SubscriberConnection {
  subscribe(channel: string, deliver: (message: string) => void): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(graceMs: number): Promise<void>;
}

/** Delays before opening a subscriber connection again after one ended: at once, then 1 s doubling to 8 s. */
const REOPEN_FIRST_RETRY_MS = 1000;
const REOPEN_MAX_DELAY_MS = 8000;

const CHECK_EVERY_MS = 30_000;
const CHECK_WAIT_MS = 10_000;

/**
 * The subscriber's check that its connection still hears: every `everyMs`, a message of its own published on
 * `channel` through the store's connection must come back on the subscriber's within `waitMs`.
 */
export interface SubscriberCheck {
  /** The check's channel, as sent to Redis (key prefix included), one per store. */
  channel: string;
  publish(message: string): Promise<void>;
  everyMs: number;
  waitMs: number;
}

/** A store's check (`subscriberCheckMs`: 30 s by default, 0 never; back within 10 s or the period) on a channel of its own. */
export function subscriberCheck(
  everyMs = CHECK_EVERY_MS,
  keyPrefix: string,
  publish: (channel: string, message: string) => Promise<void>,
): SubscriberCheck | undefined {
  if (!Number.isInteger(everyMs) || everyMs < 0 || everyMs > MAX_TIMER_MS)
    throw new VerificationOptionsError(
      'subscriberCheckMs',
      `must be 0 or a whole number of ms of at most ${MAX_TIMER_MS} (got ${everyMs})`,
      'RedisStore',
    );
  if (everyMs === 0) return undefined;
  const channel = `subscriber-check:${randomUUID()}`;
  return {
    channel: keyPrefix + channel,
    publish: (message) => publish(channel, message),
    everyMs,
    waitMs: Math.min(CHECK_WAIT_MS, everyMs),
  };
}

/** Opens the subscriber connection (`back`: subscribed again after a gap). */
export type OpenSubscriber = (back: () => void) => Promise<SubscriberConnection>;

/** The subscriber connection on the store's client (a duplicate of it, or of a cluster node's), checked as `check` says. */
export function subscriberConnection(
  client: () => Promise<unknown>,
  check?: SubscriberCheck,
): OpenSubscriber {
  return (back) => client().then((opened) => new ReopeningConnection(linkOpener(opened), back, check));
}

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
    private readonly open: OpenSubscriber,
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
      this.connection ??= this.open(() => this.gap());
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
  /** The link in use, whether its check channel is subscribed, and how to end it when found deaf. */
  private adopted: { link: SubscriberLink; checked: boolean; end(): void } | undefined;
  private checkTimer: ReturnType<typeof setTimeout> | undefined;
  /** The check's message, when heard; and the check under way ended (closing: as heard). */
  private heard: ((message: string) => void) | undefined;
  private checkDone: (() => void) | undefined;

  constructor(
    private readonly open: (events: LinkEvents, avoid?: string) => Promise<SubscriberLink>,
    private readonly back: () => void,
    private readonly check?: SubscriberCheck,
  ) {
    this.link = this.connect();
    // Its first opening's failure is each subscribe's (RedisSubscriber), not an unhandled rejection.
    this.link.catch(() => undefined);
    this.scheduleCheck();
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
    clearTimeout(this.checkTimer);
    this.checkDone?.();
    this.wake?.();
    // A link still subscribing may wait for a connection that is not coming: closed, it fails at once.
    await this.opening?.close(0).catch(() => undefined);
    const link = await this.link.catch(() => undefined);
    await link?.close(graceMs);
  }

  /**
   * Opens a link (on a cluster, on another node than `avoid` while there is one); it is in use (told of), once
   * adopted, until it ends.
   */
  private async connect(avoid?: string): Promise<SubscriberLink> {
    let state: 'opening' | 'adopted' | 'ended' = 'opening';
    /** `deaf`: found so by the check, the link is destroyed (it would answer no QUIT) and its node avoided. */
    const ended = (deaf = false): void => {
      const adopted = state === 'adopted';
      state = 'ended';
      if (!adopted || this.closed) return;
      if (this.adopted?.link === link) this.adopted = undefined;
      if (deaf) link.destroy();
      else void link.close(0).catch(() => undefined);
      this.reopen(deaf ? link.node : undefined);
    };
    const link = await this.open(
      {
        message: (channel, message) =>
          channel === this.check?.channel ? this.heard?.(message) : this.deliveries.get(channel)?.(message),
        back: () => {
          if (state !== 'adopted' || this.closed) return;
          // Back by itself: a check under way may have published while it was away, which proves nothing.
          this.checkDone?.();
          this.back();
        },
        ended: () => ended(),
      },
      avoid,
    );
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
    const adopted = { link, checked: false, end: () => ended(true) };
    this.adopted = adopted;
    // Its check channel beside, not before, the listeners' channels. One Redis refuses (an ACL granting the
    // module's channels alone) leaves the link unchecked; not awaited: on a link being closed (Redis away), an
    // UNSUBSCRIBE waits for a connection.
    if (this.check)
      link.subscribe(this.check.channel).then(
        () => void (adopted.checked = true),
        () => void link.unsubscribe(this.check!.channel).catch(() => undefined),
      );
    return link;
  }

  private scheduleCheck(): void {
    if (!this.check || this.closed) return;
    this.checkTimer = setTimeout(() => void this.runCheck(), this.check.everyMs);
    this.checkTimer.unref();
  }

  /**
   * A link that no longer hears (a cluster node removed from the cluster while it lives, a connection a
   * middlebox dropped without a word) ends as one its driver gave up on: another is opened, and `back` told.
   */
  private async runCheck(): Promise<void> {
    const adopted = this.adopted;
    if (adopted?.checked && !(await this.hears()) && this.adopted === adopted && !this.closed) adopted.end();
    this.scheduleCheck();
  }

  /** Publishes a message of its own on the check's channel: true once it comes back, false if not in time. */
  private hears(): Promise<boolean> {
    const check = this.check!;
    const nonce = randomUUID();
    return new Promise((resolve) => {
      let settled = false;
      const done = (heard: boolean): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (this.heard === onMessage) this.heard = this.checkDone = undefined;
        resolve(heard);
      };
      // Past the wait, the verdict waits for the sockets' next read: a stalled process's timers run before it,
      // and a message that came back in time may be waiting in it.
      const timer = setTimeout(() => setImmediate(() => done(false)), check.waitMs);
      timer.unref();
      const onMessage = (message: string): void => {
        if (message === nonce) done(true);
      };
      this.heard = onMessage;
      this.checkDone = () => done(true);
      // The store's own connection failing tells nothing of this one's (its driver's events do).
      check.publish(nonce).catch(() => done(true));
    });
  }

  private reopen(avoid?: string): void {
    const attempt = new Promise<void>((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, this.delayMs);
    }).then(() => {
      if (this.closed) throw new VerificationStoreUnavailableError('subscribe', 'the subscriber is closed');
      return this.connect(avoid);
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
        this.reopen(avoid);
      },
    );
  }
}
