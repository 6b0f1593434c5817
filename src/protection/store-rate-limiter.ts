import type { StoreWriteOptions, VerificationStore } from '../store/verification-store.interface.js';

export interface StoreRateLimiterOptions {
  /** Namespace of the limiter's keys in the store. */
  keyPrefix: string;
  /** Points allowed per window. */
  points: number;
  /** Window length in ms (fixed window, from the first point counted). */
  windowMs: number;
  /**
   * Counters anyone can create one of per caller (per-client limits): written evictable, so a
   * flood of callers never evicts a kept entry from a bounded store. Default false.
   */
  evictable?: boolean;
}

/** The outcome of one consume or peek. */
export interface ConsumeOutcome {
  allowed: boolean;
  /** Points counted in the current window, this consume included. */
  consumed: number;
  /** Time until the window ends (store clock). */
  msBeforeNext: number;
}

/**
 * A fixed-window limit per key on the module's VerificationStore: `store.increment` is the atomic
 * counter, and its TTL, set when the counter is created and never extended, is the window. So one
 * limiter works on MemoryStore and RedisStore alike, its windows follow the store's clock (tests
 * move the sandbox's clock), and every instance sharing the store shares the counts. A consume past
 * the limit is counted too (the window's count says how far over it went) and refused.
 */
export class StoreRateLimiter {
  readonly points: number;
  readonly windowMs: number;
  private readonly keyPrefix: string;
  private readonly writeOptions: StoreWriteOptions | undefined;

  constructor(
    protected readonly store: VerificationStore,
    options: StoreRateLimiterOptions,
  ) {
    this.keyPrefix = options.keyPrefix;
    this.points = options.points;
    this.windowMs = options.windowMs;
    this.writeOptions = options.evictable ? { evictable: true } : undefined;
  }

  /** A limiter for one of the module's `{ points, windowMs }` options, or undefined when it is off. */
  static forLimit(
    store: VerificationStore,
    keyPrefix: string,
    limit: { points: number; windowMs: number } | false,
    evictable = false,
  ): StoreRateLimiter | undefined {
    return limit === false
      ? undefined
      : new StoreRateLimiter(store, { keyPrefix, points: limit.points, windowMs: limit.windowMs, evictable });
  }

  /** The store key of `key`'s counter: `<prefix>:<key>` (the layout earlier versions wrote, so counts carry over). */
  storeKey(key: string): string {
    return this.keyPrefix === '' ? key : `${this.keyPrefix}:${key}`;
  }

  /**
   * Counts `points` against `key`; allowed while the window's count stays within the limit. A
   * window of its own (`windowMs`) applies only when this call creates the counter. Store failures
   * reject (VerificationStoreUnavailableError); an exhausted limit is an outcome, not an error.
   */
  async tryConsume(key: string, points = 1, windowMs = this.windowMs): Promise<ConsumeOutcome> {
    const state = await this.add(key, points, windowMs);
    return {
      allowed: state.value <= this.points,
      consumed: state.value,
      msBeforeNext: Math.max(state.expiresAt - this.store.now(), 0),
    };
  }

  /**
   * Whether `key` still has a point left, without counting one: one store read, and a second
   * only when the key is used up (adding 0 tells when its window ends without touching it).
   */
  async peek(key: string): Promise<ConsumeOutcome> {
    const consumed = Number((await this.store.get(this.storeKey(key))) ?? 0);
    if (!(consumed >= this.points)) return { allowed: true, consumed, msBeforeNext: 0 };
    const state = await this.add(key, 0, this.windowMs);
    return {
      allowed: state.value < this.points,
      consumed: state.value,
      msBeforeNext: Math.max(state.expiresAt - this.store.now(), 0),
    };
  }

  /** Gives `points` back to `key` (an attempt that was counted and then refused elsewhere). */
  async refund(key: string, points = 1, windowMs = this.windowMs): Promise<void> {
    if (points === 0) return;
    await this.add(key, -points, windowMs);
  }

  /** Counts `points` more against `key` whatever the limit (a real cost above its estimate); answers the new count. */
  async charge(key: string, points: number, windowMs = this.windowMs): Promise<number> {
    return (await this.add(key, points, windowMs)).value;
  }

  protected add(key: string, by: number, windowMs: number): Promise<{ value: number; expiresAt: number }> {
    return this.store.increment(this.storeKey(key), by, Math.max(1, Math.round(windowMs)), this.writeOptions);
  }
}
