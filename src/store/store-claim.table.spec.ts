import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from './memory.store.js';
import { RedisStore } from './redis.store.js';
import { releaseClaim, takeClaim, type StoreClaim } from './store-claim.js';
import type { VerificationStore } from './verification-store.interface.js';
import { ArgumentRangeError } from '../core/phone-verification.error.js';
import { hostStoreOf } from '../../test/support/host-store.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';

/**
 * One table of claims over every store a claim runs on: two instances of a deployment (`a`, `b`) sharing
 * one store, on one test clock. Redis' own expiry (PX) is real time and the leases here outlast the test:
 * only the store clock's logical expiry ends a claim.
 */
interface Pair {
  readonly a: VerificationStore;
  readonly b: VerificationStore;
  /** Whether releaseClaim is the store's atomic replace (else the read-then-delete fallback). */
  readonly atomic: boolean;
}

// Ahead of real time (a test clock only runs ahead of it, redis-scripts.ts).
const START = Date.now() + 3_600_000;
let now = START;
const clock = () => now;
const closers: (() => Promise<void>)[] = [];

const shapes: [string, () => Promise<Pair>][] = [
  [
    'MemoryStore',
    async () => {
      const store = new MemoryStore({ clock });
      closers.push(() => store.close());
      return { a: store, b: store, atomic: true };
    },
  ],
  [
    'RedisStore (two instances)',
    async () => {
      const keyPrefix = `pv-claim-table:${randomUUID()}:`;
      const [a, b] = [0, 1].map(() => new RedisStore({ url: sharedRedisUrl(), keyPrefix, clock }));
      closers.push(
        () => a!.close(),
        () => b!.close(),
      );
      return { a: a!, b: b!, atomic: true };
    },
  ],
  [
    'a host’s store without replaceIfEquals (two instances)',
    async () => {
      const inner = new MemoryStore({ clock });
      closers.push(() => inner.close());
      return { a: hostStoreOf(inner), b: hostStoreOf(inner, { delayedWrites: true }), atomic: false };
    },
  ],
];

afterAll(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
});

describe.each(shapes)('store claims on %s', (_, open) => {
  let pair: Pair;
  const setUp = async () => {
    now = START;
    pair = await open();
  };
  afterEach(async () => {
    // A write left in flight lands before the next test moves the clock.
    await new Promise((resolve) => setTimeout(resolve, 5));
  });

  it('of many holders racing on two instances for one key, exactly one holds it: one emission, not two', async () => {
    await setUp();
    const key = `race:${randomUUID()}`;
    const taken = await Promise.all(
      Array.from({ length: 12 }, (_, i) => takeClaim(i % 2 ? pair.b : pair.a, key, 10_000, 'emitting:')),
    );
    const holders = taken.filter((claim): claim is StoreClaim => claim !== null);
    expect(holders).toHaveLength(1);
    await expect(pair.b.get(key)).resolves.toBe(holders[0]!.token);
  });

  it('held until the lease ends to the ms, by the store’s clock: one ms before, at, and one after', async () => {
    await setUp();
    const key = `edge:${randomUUID()}`;
    const first = (await takeClaim(pair.a, key, 10_000))!;
    expect(first.until).toBe(START + 10_000);
    now = first.until - 1;
    await expect(takeClaim(pair.b, key, 10_000)).resolves.toBeNull();
    now = first.until;
    const second = (await takeClaim(pair.b, key, 10_000))!;
    expect(second).not.toBeNull();
    // The lapsed holder gives back nothing: the second's claim stands, at `until` and past it.
    await expect(releaseClaim(pair.a, first)).resolves.toBe(false);
    now = first.until + 1;
    await expect(releaseClaim(pair.a, first)).resolves.toBe(false);
    await expect(pair.b.get(key)).resolves.toBe(second.token);
    await expect(takeClaim(pair.a, key, 10_000)).resolves.toBeNull();
  });

  it('given back one ms before its end on the atomic stores; on the fallback not in the last second, yet never lost', async () => {
    await setUp();
    const key = `last-ms:${randomUUID()}`;
    const claim = (await takeClaim(pair.a, key, 10_000))!;
    now = claim.until - 1;
    await expect(releaseClaim(pair.a, claim)).resolves.toBe(pair.atomic);
    await expect(pair.b.get(key)).resolves.toBe(pair.atomic ? null : claim.token);
    // Refused or not, the key is free for the next holder once the lease ends, and only then.
    now = claim.until;
    await expect(takeClaim(pair.b, key, 10_000)).resolves.not.toBeNull();
  });

  it('a holder whose work outlived its lease, releasing on either instance, never frees the next holder’s claim', async () => {
    await setUp();
    const key = `outlived:${randomUUID()}`;
    const slow = (await takeClaim(pair.a, key, 5_000, 'processing:'))!;
    now += 5_000;
    const next = (await takeClaim(pair.b, key, 5_000, 'processing:'))!;
    for (const store of [pair.a, pair.b]) await expect(releaseClaim(store, slow)).resolves.toBe(false);
    await expect(pair.a.get(key)).resolves.toBe(next.token);
    // A third comes while the next still works: turned away (no second payment).
    await expect(takeClaim(pair.a, key, 5_000, 'processing:')).resolves.toBeNull();
    now += 1_000;
    await expect(releaseClaim(pair.b, next)).resolves.toBe(true);
    await expect(takeClaim(pair.a, key, 5_000)).resolves.not.toBeNull();
  });

  it.each([0, -1, -10_000, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY])(
    'a lease of %p ms is refused (RangeError) and leaves the key free',
    async (leaseMs) => {
      await setUp();
      const key = `bad-lease:${randomUUID()}`;
      await expect(takeClaim(pair.a, key, leaseMs)).rejects.toBeInstanceOf(ArgumentRangeError);
      await expect(pair.b.get(key)).resolves.toBeNull();
      await expect(takeClaim(pair.b, key, 1_000)).resolves.not.toBeNull();
    },
  );

  it('a lease of a fraction of a ms ends where its `until` says, alike on every store', async () => {
    await setUp();
    const key = `fraction:${randomUUID()}`;
    const claim = (await takeClaim(pair.a, key, 2_500.5))!;
    expect(claim.until).toBe(START + 2_500.5);
    now = START + 2_500;
    await expect(takeClaim(pair.b, key, 1_000)).resolves.toBeNull();
    await expect(pair.b.get(key)).resolves.toBe(claim.token);
    now = START + 2_501;
    await expect(pair.b.get(key)).resolves.toBeNull();
    await expect(takeClaim(pair.b, key, 1_000)).resolves.not.toBeNull();
  });

  it('a huge lease holds, and its holder gives it back', async () => {
    await setUp();
    const key = `huge:${randomUUID()}`;
    const claim = (await takeClaim(pair.a, key, 1e15))!;
    now += 1e14;
    await expect(takeClaim(pair.b, key, 1_000)).resolves.toBeNull();
    await expect(releaseClaim(pair.b, claim)).resolves.toBe(true);
    await expect(takeClaim(pair.b, key, 1_000)).resolves.not.toBeNull();
  });

  it('keys with Redis Cluster hash tags and labels with separators are claims of their own, given back as taken', async () => {
    await setUp();
    const id = randomUUID();
    const keys = [
      `a{${id}}b`,
      `c{${id}}d`,
      `{}${id}`,
      `}{${id}`,
      `{${id}`,
      `ключ:{${id}}:☎`,
      `x:${id}\u0000y`,
    ];
    const labels = ['', ':', '1700000000000:', '{t}:', 'done', 'é☎:', '\u0000'];
    const claims = await Promise.all(keys.map((key, i) => takeClaim(pair.a, key, 10_000, labels[i])));
    claims.forEach((claim, i) => expect(claim?.token.startsWith(labels[i]!)).toBe(true));
    for (const [i, key] of keys.entries()) {
      await expect(pair.b.get(key)).resolves.toBe(claims[i]!.token);
      await expect(takeClaim(pair.b, key, 10_000, labels[i])).resolves.toBeNull();
    }
    // A value that is the token without its label, or its label alone, is not the claim.
    const [first] = claims;
    await expect(releaseClaim(pair.b, { ...first!, key: keys[1]! })).resolves.toBe(false);
    await expect(releaseClaim(pair.b, { ...claims[4]!, token: claims[4]!.token.slice(4) })).resolves.toBe(
      false,
    );
    for (const claim of claims) await expect(releaseClaim(pair.b, claim!)).resolves.toBe(true);
    for (const key of keys) await expect(pair.a.get(key)).resolves.toBeNull();
  });
});

describe('store claims on a host’s store: a write landing between the fallback’s read and its delete', () => {
  it('the lease ending (and another holder taking the key) during the read: the release deletes nothing', async () => {
    let at = 1_000_000;
    const inner = new MemoryStore({ clock: () => at });
    let during: (() => Promise<void>) | undefined;
    const host = hostStoreOf(inner, { afterGet: async () => during?.(), delayedWrites: true });
    try {
      const slow = (await takeClaim(host, 'k', 10_000))!;
      let other: StoreClaim | null = null;
      during = async () => {
        during = undefined;
        at = slow.until;
        other = await takeClaim(inner, 'k', 10_000);
      };
      await expect(releaseClaim(host, slow)).resolves.toBe(false);
      expect(other).not.toBeNull();
      await new Promise((resolve) => setTimeout(resolve, 5));
      await expect(inner.get('k')).resolves.toBe(other!.token);
    } finally {
      await inner.close();
    }
  });

  it('the clock reaching the last second during the read: refused, the claim kept until its lease ends', async () => {
    let at = 1_000_000;
    const inner = new MemoryStore({ clock: () => at });
    const host = hostStoreOf(inner, {
      afterGet: async () => {
        at = 1_009_001;
      },
    });
    try {
      const claim = (await takeClaim(host, 'k', 10_000))!;
      await expect(releaseClaim(host, claim)).resolves.toBe(false);
      await expect(inner.get('k')).resolves.toBe(claim.token);
    } finally {
      await inner.close();
    }
  });
});
