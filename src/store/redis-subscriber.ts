import { createCommandRunner, detectRedisDriver } from './redis-command-runner.js';
import type { StoreMessageListener } from './verification-store.interface.js';
import { ArgumentTypeError } from '../core/phone-verification.error.js';

/** What the subscriber needs of a duplicated ioredis client (Redis or Cluster). */
interface IoRedisSubscriberLike {
  readonly status: string;
  subscribe(channel: string): Promise<unknown>;
  unsubscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'error' | 'ready', listener: () => void): unknown;
  once(event: 'ready', listener: () => void): unknown;
}

/** What the subscriber needs of a duplicated node-redis client or cluster. */
interface NodeRedisSubscriberLike {
  connect(): Promise<unknown>;
  subscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  unsubscribe(channel: string, listener: (message: string) => void): Promise<unknown>;
  on(event: 'error' | 'ready', listener: () => void): unknown;
}

interface SubscriberConnection {
  subscribe(channel: string, deliver: (message: string) => void): Promise<void>;
  unsubscribe(channel: string): Promise<void>;
  close(graceMs: number): Promise<void>;
}

/**
 * The store's side of Redis pub/sub. A connection in subscriber mode can run no other command, so
 * messages arrive on a dedicated connection: a `duplicate()` of the store's client (the host's or
 * its own; the host's is never put in subscriber mode or closed). It is opened with the first
 * listener and closed with the last one, so a deployment that never streams opens nothing, and a
 * store the host owns is left with no connection of ours once the module is gone. ioredis and
 * node-redis subscribe again by themselves after a reconnection; once subscribed again, the listeners'
 * `onGap` is called (what was published meanwhile is lost).
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
    try {
      this.connection ??= this.client().then((client) => openSubscriber(client, () => this.gap()));
      const connection = await this.connection;
      let done = this.subscribed.get(channel);
      if (!done) {
        done = connection.subscribe(channel, (message) => this.deliver(channel, message));
        this.subscribed.set(channel, done);
      }
      await done;
    } catch (error) {
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

async function openSubscriber(client: unknown, back: () => void): Promise<SubscriberConnection> {
  const driver = detectRedisDriver(client);
  const duplicate = (client as { duplicate?: () => unknown }).duplicate;
  if (driver === undefined || typeof duplicate !== 'function')
    throw new ArgumentTypeError(
      'RedisStore: subscribing needs a client with duplicate() (ioredis or node-redis)',
    );
  const copy = duplicate.call(client);
  const release = (graceMs: number) => createCommandRunner(copy).release(true, graceMs);
  if (driver === 'ioredis') {
    const sub = copy as IoRedisSubscriberLike;
    const deliveries = new Map<string, (message: string) => void>();
    sub.on('error', () => undefined);
    sub.on('message', (channel, message) => deliveries.get(channel)?.(message));
    let connected = sub.status === 'ready';
    sub.on('ready', () => {
      if (!connected) return void (connected = true);
      // ioredis subscribes again by itself; `back` once every channel surely is (SUBSCRIBE is idempotent).
      void Promise.all([...deliveries.keys()].map((channel) => sub.subscribe(channel))).then(
        back,
        () => undefined,
      );
    });
    return {
      async subscribe(channel, deliver) {
        deliveries.set(channel, deliver);
        // A copy of a client without an offline queue refuses commands until it is connected.
        if (sub.status !== 'ready') await new Promise<void>((resolve) => sub.once('ready', resolve));
        await sub.subscribe(channel);
      },
      async unsubscribe(channel) {
        deliveries.delete(channel);
        await sub.unsubscribe(channel);
      },
      close: release,
    };
  }
  const sub = copy as NodeRedisSubscriberLike;
  const deliveries = new Map<string, (message: string) => void>();
  sub.on('error', () => undefined);
  let connected = false;
  // node-redis subscribes again by itself before it is ready.
  sub.on('ready', () => (connected ? back() : (connected = true)));
  await sub.connect();
  return {
    async subscribe(channel, deliver) {
      deliveries.set(channel, deliver);
      await sub.subscribe(channel, deliver);
    },
    async unsubscribe(channel) {
      const deliver = deliveries.get(channel);
      deliveries.delete(channel);
      // With its listener: node-redis then subscribes again a channel subscribed while this UNSUBSCRIBE is
      // under way. Without one, its answer drops every listener the channel has by then, the new one's too.
      if (deliver) await sub.unsubscribe(channel, deliver);
    },
    close: release,
  };
}
