import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { StoreRateLimiter } from '../../src/protection/store-rate-limiter.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';

/** A clock the test moves by hand. */
class ManualClock {
  at = 1_700_000_000_000;
  readonly now = (): number => this.at;
}

const stores: [string, (clock: ManualClock) => VerificationStore][] = [
  ['MemoryStore', (clock) => new MemoryStore({ clock: clock.now })],
  [
    'RedisStore',
    (clock) =>
      new RedisStore({ url: sharedRedisUrl(), keyPrefix: `pv-test:${randomUUID()}:`, clock: clock.now }),
  ],
];

describe.each(stores)('StoreRateLimiter on %s', (_name, createStore) => {
  const clock = new ManualClock();
  let store: VerificationStore;

  beforeAll(() => {
    store = createStore(clock);
  });
  afterAll(async () => {
    await store?.close();
  });

  it('allows exactly `points` per window and tells the time to the window end on the store clock', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'a', points: 3, windowMs: 60_000 });
    const results = [];
    for (let i = 0; i < 3; i++) {
      results.push(await limiter.tryConsume('k'));
      clock.at += 1000;
    }
    expect(results.map((r) => [r.allowed, r.consumed])).toEqual([
      [true, 1],
      [true, 2],
      [true, 3],
    ]);
    expect(results.map((r) => r.msBeforeNext)).toEqual([60_000, 59_000, 58_000]);
    expect(await limiter.tryConsume('k')).toEqual({ allowed: false, consumed: 4, msBeforeNext: 57_000 });
    // Refusals do not push the window end out (fixed window).
    clock.at += 56_999;
    expect((await limiter.tryConsume('k')).allowed).toBe(false);
    clock.at += 1;
    expect(await limiter.tryConsume('k')).toEqual({ allowed: true, consumed: 1, msBeforeNext: 60_000 });
  });

  it('keeps keys and limiters apart', async () => {
    const one = new StoreRateLimiter(store, { keyPrefix: 'one', points: 1, windowMs: 10_000 });
    const two = new StoreRateLimiter(store, { keyPrefix: 'two', points: 1, windowMs: 10_000 });
    expect((await one.tryConsume('x')).allowed).toBe(true);
    expect((await one.tryConsume('x')).allowed).toBe(false);
    expect((await one.tryConsume('y')).allowed).toBe(true);
    expect((await two.tryConsume('x')).allowed).toBe(true);
  });

  it('refund gives points back within the window', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'refund', points: 2, windowMs: 10_000 });
    await limiter.tryConsume('k');
    await limiter.tryConsume('k');
    await limiter.refund('k');
    expect(await limiter.tryConsume('k')).toMatchObject({ allowed: true, consumed: 2 });
    expect((await limiter.tryConsume('k')).allowed).toBe(false);
  });

  it('consumes weighted points (the spend cap in kopecks) with a window of its own', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'money', points: 900, windowMs: 86_400_000 });
    expect(await limiter.tryConsume('day', 300, 5000)).toEqual({
      allowed: true,
      consumed: 300,
      msBeforeNext: 5000,
    });
    expect((await limiter.tryConsume('day', 600, 5000)).allowed).toBe(true);
    expect(await limiter.tryConsume('day', 1, 5000)).toMatchObject({ allowed: false, consumed: 901 });
    await limiter.refund('day', 1, 5000);
    await limiter.charge('day', 5, 5000);
    expect(await limiter.tryConsume('day', 0, 5000)).toMatchObject({ allowed: false, consumed: 905 });
    // The window is the one the counter was created with, not the limiter's day.
    clock.at += 5000;
    expect(await limiter.tryConsume('day', 900)).toEqual({
      allowed: true,
      consumed: 900,
      msBeforeNext: 86_400_000,
    });
  });

  it('keeps the counter in the store under <prefix>:<key> with the window as its TTL', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'ttl', points: 2, windowMs: 30_000 });
    await limiter.tryConsume('k');
    expect(await store.get('ttl:k')).toBe('1');
    expect(limiter.storeKey('k')).toBe('ttl:k');
    clock.at += 29_999;
    expect(await store.get('ttl:k')).toBe('1');
    clock.at += 1;
    expect(await store.get('ttl:k')).toBeNull();
  });

  it('neither a refund nor a refused consume moves the window end', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'fixed', points: 1, windowMs: 10_000 });
    await limiter.tryConsume('k');
    clock.at += 6000;
    await limiter.refund('k', 1, 60_000);
    expect(await limiter.tryConsume('k', 1, 60_000)).toEqual({
      allowed: true,
      consumed: 1,
      msBeforeNext: 4000,
    });
    expect((await limiter.tryConsume('k')).allowed).toBe(false);
    clock.at += 4000;
    expect(await limiter.tryConsume('k')).toEqual({ allowed: true, consumed: 1, msBeforeNext: 10_000 });
  });

  it('a refund of zero points writes nothing', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'zero', points: 1, windowMs: 10_000 });
    await limiter.refund('k', 0);
    expect(await store.get('zero:k')).toBeNull();
  });

  it('peek tells whether a point is left without counting one', async () => {
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'peek', points: 2, windowMs: 20_000 });
    expect(await limiter.peek('k')).toEqual({ allowed: true, consumed: 0, msBeforeNext: 0 });
    await limiter.tryConsume('k');
    expect(await limiter.peek('k')).toEqual({ allowed: true, consumed: 1, msBeforeNext: 0 });
    expect(await limiter.peek('k')).toEqual({ allowed: true, consumed: 1, msBeforeNext: 0 });
    await limiter.tryConsume('k');
    clock.at += 5000;
    expect(await limiter.peek('k')).toEqual({ allowed: false, consumed: 2, msBeforeNext: 15_000 });
    clock.at += 15_000;
    expect(await limiter.peek('k')).toEqual({ allowed: true, consumed: 0, msBeforeNext: 0 });
  });
});

describe('StoreRateLimiter writes', () => {
  it('marks per-caller counters evictable, and only those', async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock: clock.now });
    const written: [string, unknown][] = [];
    const increment = store.increment.bind(store);
    store.increment = (key, by, ttlMs, options) => {
      written.push([key, options]);
      return increment(key, by, ttlMs, options);
    };
    const perCaller = StoreRateLimiter.forLimit(store, 'caller', { points: 1, windowMs: 1000 }, true)!;
    const perPhone = StoreRateLimiter.forLimit(store, 'phone', { points: 1, windowMs: 1000 })!;
    await perCaller.tryConsume('a');
    await perCaller.refund('a');
    await perPhone.tryConsume('a');
    await perPhone.charge('a', 2);
    expect(written).toEqual([
      ['caller:a', { evictable: true }],
      ['caller:a', { evictable: true }],
      ['phone:a', undefined],
      ['phone:a', undefined],
    ]);
    expect(StoreRateLimiter.forLimit(store, 'off', false)).toBeUndefined();
    await store.close();
  });
});

describe('StoreRateLimiter between instances', () => {
  // Another instance gives a point back between peek's two reads: the second read is what holds.
  it("peek sees a point given back between its two reads (another instance's refund): allowed", async () => {
    const clock = new ManualClock();
    const store = new MemoryStore({ clock: clock.now });
    const other = new StoreRateLimiter(store, { keyPrefix: 'race', points: 2, windowMs: 20_000 });
    await other.tryConsume('k');
    await other.tryConsume('k');
    const get = store.get.bind(store);
    store.get = async (key) => {
      const read = await get(key);
      await other.refund('k');
      return read;
    };
    const limiter = new StoreRateLimiter(store, { keyPrefix: 'race', points: 2, windowMs: 20_000 });
    expect(await limiter.peek('k')).toEqual({ allowed: true, consumed: 1, msBeforeNext: 20_000 });
    await store.close();
  });
});
