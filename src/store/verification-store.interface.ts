/**
 * The few atomic operations the module needs from shared state. Every TTL and due time is
 * measured on the store's clock (`now()`), so tests move time with the sandbox's clock and
 * limits, cooldowns and expiries follow. Keys are opaque strings chosen by the module; a
 * store may prefix them. Values are strings (JSON where structured).
 */
/** How a bounded store may treat an entry when it is full. */
export interface StoreWriteOptions {
  /**
   * True for entries any caller can make the module create, one per caller (the per-client
   * counters: one per IP or /64). A bounded store may evict an evictable entry, but only to make
   * room for another evictable one; an entry written without the flag (a session record, a
   * cooldown, a per-phone limit) is never evicted to make room for an evictable entry. The last
   * write of a key decides its class. A store that never evicts (Redis) may ignore it.
   */
  evictable?: boolean;
  /**
   * `increment` only: the counter's TTL starts again at this increment (a sliding window: it lives
   * `ttlMs` past its last increment), for a counter that must outlive what each increment names (a
   * ring's next slot). Without it, a fixed window. A store that ignores it keeps fixed windows.
   */
  renew?: boolean;
}

import type { StoreBatchResults, StoreOperation } from './store-batch.js';

/** Receives one published message. */
export type StoreMessageListener = (message: string) => void;

export interface VerificationStore {
  /**
   * Milliseconds since the epoch on the store's clock. Within the module it is the module's one
   * clock: the store the module creates runs on it, and a store instance given reads the same
   * (the module takes the instance's clock, or checks at boot that the two agree).
   */
  now(): number;

  /** The value, or null when absent or expired. */
  get(key: string): Promise<string | null>;
  /** Sets the value; it expires `ttlMs` after now. */
  set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<void>;
  /** Sets the value only when absent (or expired). True when this call set it. Atomic. */
  setIfAbsent(key: string, value: string, ttlMs: number, options?: StoreWriteOptions): Promise<boolean>;
  /** Removes the key; no error when absent. */
  delete(key: string): Promise<void>;
  /**
   * Replaces the value with `value` for `ttlMs` (or removes the key, `value` null) only while it is `expected`.
   * True when this call did. Atomic. Optional for a host's own store: without it the module reads the value
   * and then writes (`replaceIfEquals` of store-replace.ts), which a write landing in between can undo.
   * `options`: as `set`'s, for the value written.
   */
  replaceIfEquals?(
    key: string,
    expected: string,
    value: string | null,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<boolean>;
  /**
   * Adds `by` to an integer counter and returns the new value and the window end. The TTL
   * is set when the counter is created and not extended by later increments (a fixed
   * window; `options.renew`: every increment starts it again); an expired counter starts again
   * from zero. Atomic.
   */
  increment(
    key: string,
    by: number,
    ttlMs: number,
    options?: StoreWriteOptions,
  ): Promise<{ value: number; expiresAt: number }>;

  /**
   * Runs several key operations together and answers each one's result, in order: one round trip
   * (RedisStore: an MGET of its reads and one script call; on a Redis Cluster one command per key). Each
   * operation is as atomic as its own method; the batch as a whole is not a transaction (MemoryStore
   * runs it in one step). An operation that fails rejects the batch; the others may have run.
   * A key's operations reach RedisStore's Redis in the order issued (also after Redis lost its scripts);
   * a host's store may send operations issued without awaiting one another in another order: the module
   * awaits a write before it announces it. Optional for a host's own store: without it the module
   * issues the operations at once by their own methods (`storeBatch`).
   */
  batch?<const T extends readonly StoreOperation[]>(operations: T): Promise<StoreBatchResults<T>>;

  /** Adds or moves `member` in the due-queue `queue`, due at `dueAt` (store clock, ms). */
  schedule(queue: string, member: string, dueAt: number): Promise<void>;
  /**
   * Takes up to `limit` members whose due time has passed and, in the same atomic step,
   * re-schedules each at now + `leaseMs`, so that one member is handed to one caller per
   * lease across every instance sharing the store.
   */
  claimDue(queue: string, limit: number, leaseMs: number): Promise<string[]>;
  /** Removes `member` from the queue; no error when absent. */
  unschedule(queue: string, member: string): Promise<void>;
  /** Number of members in the queue (due or not). */
  queueSize(queue: string): Promise<number>;

  /**
   * Sends `message` to every current subscriber of `channel` on every instance sharing the store
   * (Redis PUBLISH; in-process for MemoryStore). Fire-and-forget: a subscriber that joins later
   * never sees it, and two messages may arrive in another order than sent (a Redis Cluster relays
   * each from the node that took it), so a message says what to read again, not a state. Optional
   * for a host's own store: without it, changes reach only the streams of the instance that observed
   * them.
   */
  publish?(channel: string, message: string): Promise<void>;
  /**
   * Calls `listener` with each message published on `channel` from now on (Redis: a dedicated
   * subscriber connection the store opens and closes itself). Resolves once subscribed, with the
   * function that removes the listener. `onGap`, when given, is called once the subscription, lost
   * (a reconnection), is back: what was published in between never arrives.
   */
  subscribe?(channel: string, listener: StoreMessageListener, onGap?: () => void): Promise<() => void>;

  /** Releases what the store created itself (timers, its own connections). Never closes a client it was given. */
  close(): Promise<void>;
}

/** Injection token, same name as the interface (as in @nestjs/throttler). */
export const VerificationStore = Symbol('VerificationStore');
