import { RateLimiterRedis, RateLimiterRes, type RateLimiterStoreAbstract } from 'rate-limiter-flexible';
import type { StoreWriteOptions, VerificationStore } from '../store/verification-store.interface.js';

/**
 * rate-limiter-flexible declares RateLimiterStoreAbstract in its types but does not export it at
 * runtime; every store-backed limiter of the library (RateLimiterRedis among them) extends it.
 */
const RateLimiterStoreBase = Object.getPrototypeOf(RateLimiterRedis) as typeof RateLimiterStoreAbstract;
if (RateLimiterStoreBase.name !== 'RateLimiterStoreAbstract')
  throw new Error('rate-limiter-flexible: RateLimiterStoreAbstract not found (library layout changed)');

/** What the store answers to one upsert: the counter after it and when its window ends. */
interface CounterState {
  value: number;
  expiresAt: number;
}

export interface StoreRateLimiterOptions {
  /** Namespace of the limiter's keys in the store. */
  keyPrefix: string;
  /** Points allowed per window. */
  points: number;
  /** Window length in ms (fixed window, from the first point consumed). */
  windowMs: number;
  /**
   * Counters anyone can create one of per caller (per-client limits): written evictable, so a
   * flood of callers never evicts a kept entry from a bounded store. Default false.
   */
  evictable?: boolean;
}

/** The outcome of one consume, as a value instead of rate-limiter-flexible's resolve/reject. */
export interface ConsumeOutcome {
  allowed: boolean;
  /** Points counted in the current window, this consume included. */
  consumed: number;
  /** Time until the window ends (store clock). */
  msBeforeNext: number;
}

/**
 * A rate-limiter-flexible limiter on top of the module's VerificationStore: the library does the
 * limiter arithmetic (points, rejection, reward/penalty), the store does the atomic counter with
 * its TTL. So one limiter works on MemoryStore and RedisStore alike, its windows follow the
 * store's clock (tests move the sandbox's clock), and state is shared by every instance that
 * shares the store.
 */
export class StoreRateLimiter extends RateLimiterStoreBase {
  private readonly store: VerificationStore;
  private readonly writeOptions: StoreWriteOptions | undefined;

  constructor(store: VerificationStore, options: StoreRateLimiterOptions) {
    super({
      storeClient: store,
      keyPrefix: options.keyPrefix,
      points: options.points,
      duration: options.windowMs / 1000,
    });
    this.store = store;
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

  /**
   * Counts `points` against `key`. Store failures reject (VerificationStoreUnavailableError);
   * an exhausted limit is an outcome, not an error.
   */
  async tryConsume(key: string, points = 1, windowMs?: number): Promise<ConsumeOutcome> {
    const options = windowMs === undefined ? {} : { customDuration: windowMs / 1000 };
    try {
      return outcome(true, await this.consume(key, points, options));
    } catch (error) {
      if (error instanceof RateLimiterRes) return outcome(false, error);
      throw error;
    }
  }

  /**
   * Whether `key` still has a point left, without counting one: one store read, and a second
   * only when the key is used up (to learn when its window ends).
   */
  async peek(key: string): Promise<ConsumeOutcome> {
    const rlKey = this.getKey(key);
    const consumed = Number((await this.store.get(rlKey)) ?? 0);
    if (!(consumed >= this.points)) return { allowed: true, consumed, msBeforeNext: 0 };
    const state = await this.store.increment(rlKey, 0, Math.max(1, Math.round(this.msDuration)));
    return {
      allowed: state.value < this.points,
      consumed: state.value,
      msBeforeNext: Math.max(state.expiresAt - this.store.now(), 0),
    };
  }

  /** Gives `points` back to `key` (an attempt that was counted and then refused elsewhere). */
  async refund(key: string, points = 1, windowMs?: number): Promise<void> {
    if (points === 0) return;
    await this.reward(key, points, windowMs === undefined ? {} : { customDuration: windowMs / 1000 });
  }

  /* ------------------------------------------ rate-limiter-flexible's store contract */

  _upsert(rlKey: string, points: number, msDuration: number, forceExpire = false): Promise<CounterState> {
    const ttlMs = Math.max(1, Math.round(msDuration));
    if (forceExpire) return this.overwrite(rlKey, points, ttlMs);
    return this.store.increment(rlKey, points, ttlMs, this.writeOptions);
  }

  async _get(rlKey: string): Promise<CounterState | null> {
    if ((await this.store.get(rlKey)) === null) return null;
    // Adding 0 reads the counter and its window end without touching either.
    return this.store.increment(rlKey, 0, Math.max(1, Math.round(this.msDuration)), this.writeOptions);
  }

  async _delete(rlKey: string): Promise<boolean> {
    const existed = (await this.store.get(rlKey)) !== null;
    await this.store.delete(rlKey);
    return existed;
  }

  _getRateLimiterRes(_rlKey: string, changedPoints: number, state: CounterState): RateLimiterRes {
    return new RateLimiterRes(
      Math.max(this.points - state.value, 0),
      Math.max(state.expiresAt - this.store.now(), 0),
      state.value,
      state.value === changedPoints,
    );
  }

  private async overwrite(rlKey: string, points: number, ttlMs: number): Promise<CounterState> {
    await this.store.set(rlKey, String(points), ttlMs, this.writeOptions);
    return { value: points, expiresAt: this.store.now() + ttlMs };
  }
}

function outcome(allowed: boolean, res: RateLimiterRes): ConsumeOutcome {
  return { allowed, consumed: res.consumedPoints, msBeforeNext: res.msBeforeNext };
}
