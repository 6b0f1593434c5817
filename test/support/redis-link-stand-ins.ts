/**
 * Stand-ins of the two Redis drivers' connections in subscriber mode (ioredis, node-redis), driven by a test:
 * up, lost and back, ended for good, a SUBSCRIBE refused. src/store/redis-subscriber.spec.ts and
 * redis-subscriber.check.spec.ts run the store's subscriber over them on jest's clock.
 */
import { EventEmitter } from 'node:events';
import { jest } from '@jest/globals';
import type { RedisSubscriber } from '../../src/store/redis-subscriber.js';

/** Lets the promises and the stand-ins' setImmediate run (timers stay on jest's clock). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise<void>((resolve) => setImmediate(resolve));
}

/** `ms` on jest's clock, then what it set off. */
export async function after(ms: number): Promise<void> {
  await jest.advanceTimersByTimeAsync(ms);
  await settle();
}

/** Subscribes and connects the link it opens. */
export async function listen(
  redis: Redis,
  store: RedisSubscriber,
  channel: string,
  heard: string[],
  onGap?: () => void,
): Promise<() => void> {
  const subscribing = store.subscribe(channel, (message) => heard.push(`${channel}:${message}`), onGap);
  await settle();
  if (!redis.last().ready) redis.last().up();
  return subscribing;
}

/** What Redis saw, in order, and the connections the subscriber opened. */
export class Redis {
  readonly log: string[] = [];
  readonly links: Link[] = [];
  /** Channels whose SUBSCRIBE Redis refuses (an ACL). */
  readonly refused = new Set<string>();
  /** The link (by number) that ends for good right after answering its first SUBSCRIBE. */
  endsOnSubscribe: number | undefined;
  last(): Link {
    return this.links.at(-1)!;
  }
}

/** A subscriber connection of either driver, driven by the test. */
export interface Link extends EventEmitter {
  readonly subscribed: Set<string>;
  readonly ready: boolean;
  /** Connected (the first time). */
  up(): void;
  /** Lost, then connected again: the driver subscribes again by itself, a moment after it is ready. */
  reconnect(): void;
  /** Its driver gave up: it never connects again. */
  end(): void;
  /** A message Redis sends it on `channel` (while subscribed, or in flight when unsubscribed). */
  send(channel: string, message: string, subscribedOnly?: boolean): void;
}

/** What both drivers' stand-ins share: Redis's log of their commands, its refusals and their channels. */
abstract class StandInLink extends EventEmitter {
  readonly subscribed = new Set<string>();
  constructor(
    protected readonly redis: Redis,
    protected readonly id: number,
  ) {
    super();
  }
  abstract end(): void;
  /** SUBSCRIBE as Redis answers it: refused by an ACL, or subscribed (and the link ended, if the test says so). */
  protected subscribing(channel: string, then: () => void = () => undefined): void {
    this.redis.log.push(`${this.id} SUBSCRIBE ${channel}`);
    if (this.redis.refused.has(channel)) throw new Error('NOPERM');
    this.subscribed.add(channel);
    then();
    if (this.redis.endsOnSubscribe === this.id) this.end();
  }
  async unsubscribe(channel: string): Promise<void> {
    this.redis.log.push(`${this.id} UNSUBSCRIBE ${channel}`);
    this.subscribed.delete(channel);
  }
  /** QUIT (ioredis) or close (node-redis): logged. */
  protected async quitting(): Promise<void> {
    this.redis.log.push(`${this.id} QUIT`);
  }
}

class IoRedisLink extends StandInLink implements Link {
  status = 'connecting';
  call(): Promise<unknown> {
    return Promise.resolve(null);
  }
  async subscribe(channel: string): Promise<void> {
    this.subscribing(channel);
  }
  quit(): Promise<void> {
    return this.quitting();
  }
  disconnect(): void {
    this.status = 'end';
  }
  get ready(): boolean {
    return this.status === 'ready';
  }
  up(): void {
    this.status = 'ready';
    this.emit('ready');
  }
  reconnect(): void {
    const channels = [...this.subscribed];
    this.subscribed.clear();
    this.up();
    setImmediate(() => channels.forEach((channel) => this.subscribed.add(channel)));
  }
  end(): void {
    this.status = 'end';
    this.emit('end');
  }
  send(channel: string, message: string, subscribedOnly = true): void {
    if (!subscribedOnly || this.subscribed.has(channel)) this.emit('message', channel, message);
  }
}

class NodeRedisLink extends StandInLink implements Link {
  isReady = false;
  isOpen = false;
  private readonly listening = new Map<string, (message: string) => void>();
  private pending: { resolve: () => void; reject: (error: Error) => void } | undefined;
  sendCommand(): Promise<unknown> {
    return Promise.resolve(null);
  }
  /** Called by the link: settles once the test says the connection is up, or that it ended. */
  connect(): Promise<unknown> {
    this.isOpen = true;
    return new Promise((resolve, reject) => (this.pending = { resolve: () => resolve(this), reject }));
  }
  get ready(): boolean {
    return this.isReady;
  }
  up(): void {
    this.isReady = true;
    this.emit('ready');
    this.pending?.resolve();
    this.pending = undefined;
  }
  async subscribe(channel: string, listener: (message: string) => void): Promise<void> {
    this.subscribing(channel, () => this.listening.set(channel, listener));
  }
  close(): Promise<void> {
    return this.quitting();
  }
  destroy(): void {
    this.isOpen = this.isReady = false;
  }
  reconnect(): void {
    // node-redis subscribes again before it says it is ready.
    this.up();
  }
  end(): void {
    this.isOpen = this.isReady = false;
    this.emit('terminated');
    this.pending?.reject(new Error('terminated'));
    this.pending = undefined;
  }
  send(channel: string, message: string, subscribedOnly = true): void {
    if (!subscribedOnly || this.subscribed.has(channel)) this.listening.get(channel)?.(message);
  }
}

/** A host's client of each driver: each `duplicate()` is a new stand-in link, numbered in Redis's log. */
function opening(redis: Redis, Stand: new (redis: Redis, id: number) => Link): () => Link {
  return () => redis.links[redis.links.push(new Stand(redis, redis.links.length)) - 1]!;
}

export const DRIVERS = {
  ioredis: (redis: Redis) => ({
    status: 'ready',
    call: () => Promise.resolve(null),
    duplicate: opening(redis, IoRedisLink),
  }),
  'node-redis': (redis: Redis) => ({
    isReady: true,
    isOpen: true,
    sendCommand: () => Promise.resolve(null),
    duplicate: opening(redis, NodeRedisLink),
  }),
};
