/**
 * Attack (U4): what the history's links (src/history/history-links.ts) leave behind an erasure.
 * - A ring links the other side's ring only when that side wrote a new entry of the pair. An owner refused the
 *   same way on two numbers within the hour writes one entry in its own ring (the second is a repeat of the
 *   first, whatever the number): the second number's ring got an entry naming the owner, so the owner's ring
 *   links that number's ring; the number's ring does not link the owner's. Once the number's entry is pushed
 *   out of its ring (maxEntries), the number's erasure no longer reaches the owner's ring: the owner's link to
 *   the erased ring stays (its slot holds the erased ring's name, its pair key names it).
 * - A ring's link count is renewed for `retentionDays` as configured at each link; its slots for as long as
 *   when they were written. `retentionDays` lowered: the count ends before links written earlier, restarts,
 *   and later links take the slots of the earlier ones, whose entries (on the other side) live on: the
 *   number's erasure no longer reaches the owner an earlier entry named.
 * - A pair's first link claims the pair (PENDING) before it takes a slot, and a link that finds the pair
 *   PENDING leaves the renewal to that first one. A store error between the two (a command timed out) left
 *   the pair PENDING for retentionDays: every later entry of the pair wrote no link, and once the number's
 *   own ring no longer named the owner, the number's erasure did not reach the owner's history.
 *
 * Expected (operations.md, "A deletion request"): once `forget` answers, no history entry lists the erased
 * number, and no link of the history names its ring.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import type { DataKeys } from '../../src/core/data-keys.js';
import { numberRing } from '../../src/history/history-rings.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../../src/options/verification-options.tokens.js';
import type {
  ResolvedVerificationOptions,
  VerificationModuleOptions,
} from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { dumpMemoryStore, dumpRedisPrefix } from '../support/store-dump.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/** `inner`, but its first increment of a number ring's link count fails (a command timed out). */
function failingFirstLinkCount(inner: VerificationStore): VerificationStore {
  let failed = false;
  return new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as unknown;
      if (property === 'increment')
        return (key: string, ...rest: [number, number, { renew?: boolean }?]) => {
          if (failed || !/^history:\{n:[^}]*\}:links$/.test(key)) return target.increment(key, ...rest);
          failed = true;
          return Promise.reject(new Error('command timed out'));
        };
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** The prefix of the RedisStore made last (one per test). */
let redisPrefix = '';

describe.each([
  [
    'MemoryStore',
    (clock: () => number): VerificationStore => new MemoryStore({ clock }),
    async (store: VerificationStore) => dumpMemoryStore(store as MemoryStore),
  ],
  [
    'RedisStore',
    (clock: () => number): VerificationStore =>
      new RedisStore({
        url: sharedRedisUrl(),
        keyPrefix: (redisPrefix = `history-links-left:${randomUUID()}:`),
        clock,
        commandTimeoutMs: 10_000,
      }),
    () => dumpRedisPrefix(sharedRedisUrl(), redisPrefix),
  ],
])('history: what links leave behind an erasure (%s)', (label, make, dump) => {
  const suite = sandboxSuite();
  let store: VerificationStore | undefined;
  afterEach(async () => {
    await store?.close();
    store = undefined;
  });
  let serial = 0;
  const phoneNumber = () =>
    `+7916${label === 'MemoryStore' ? 73 : 74}${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;

  async function boot(
    module: Partial<VerificationModuleOptions>,
  ): Promise<{ history: VerificationHistory; keys: DataKeys }> {
    store ??= make(() => suite.sb.now());
    await suite.host?.close();
    suite.host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, {
        limits: { beforeStart: () => ({ allow: false, reason: 'captcha' }) },
        ...module,
        store,
      }),
    });
    const options = suite.host.app.get<ResolvedVerificationOptions>(RESOLVED_VERIFICATION_OPTIONS, {
      strict: false,
    });
    return { history: suite.host.app.get(VerificationHistory), keys: options.dataKeys };
  }
  const refuse = async (phone: string, user: string) =>
    expect(
      (
        await call(
          suite.host!.url,
          'POST',
          '/verification/start',
          { phone_number: phone, method: 'sms' },
          { 'x-user': user },
        )
      ).status,
    ).toBe(403);
  const forget = (subject: { phoneNumber: string } | { owner: string }) =>
    suite.host!.app.get(VerificationErasure).forget(subject);

  it("an owner's refusal folded in its own ring, the number's entry pushed out, the number erased: no link names its ring", async () => {
    const { history, keys } = await boot({ history: { maxEntries: 1 } });
    const [first, second] = [phoneNumber(), phoneNumber()];
    await refuse(first, 'ivan');
    await refuse(second, 'ivan');
    // An hour later, another owner's refusal of the second number takes its ring's one slot.
    await suite.sb.advance(HOUR);
    await refuse(second, 'pete');
    expect((await history.list({ phoneNumber: second })).map((e) => e.owner)).toEqual(['pete']);

    await forget({ phoneNumber: second });

    expect(await history.list({ phoneNumber: second })).toEqual([]);
    expect((await history.list({ owner: 'ivan' })).map((e) => e.phoneNumber)).toEqual([first]);
    const tag = numberRing(keys, second).replace(/^history:\{(.*)\}$/, '$1');
    // (The erasure's mark, and the fold of the number's first refusal until its hour ends, name it as ever.)
    expect((await dump(store!)).filter((line) => line.includes(tag) && line.includes(':link'))).toEqual([]);
  });

  it("retentionDays lowered between writes, later owners refused the number once the links' count ended: its erasure still reaches the first owner's history", async () => {
    const phone = phoneNumber();
    await boot({ history: { retentionDays: 30 } });
    await refuse(phone, 'uma');
    const { history } = await boot({ history: { retentionDays: 1 } });
    await suite.sb.advance(HOUR);
    await refuse(phone, 'xena');
    await suite.sb.advance(DAY + HOUR);
    await refuse(phone, 'yves');
    expect((await history.list({ owner: 'uma' })).map((e) => e.phoneNumber)).toEqual([phone]);

    await forget({ phoneNumber: phone });

    expect(await history.list({ phoneNumber: phone })).toEqual([]);
    expect(await history.list({ owner: 'uma' })).toEqual([]);
    expect(await history.list({ owner: 'yves' })).toEqual([]);
  });

  it("a pair's first link failed after its claim (a store error): the pair's later entries still link, and the number's erasure reaches the owner", async () => {
    store = failingFirstLinkCount(make(() => suite.sb.now()));
    const { history } = await boot({ history: { maxEntries: 1 } });
    const phone = phoneNumber();
    await refuse(phone, 'olga');
    await suite.sb.advance(HOUR);
    await refuse(phone, 'olga');
    await suite.sb.advance(HOUR);
    // Another owner's refusal takes the number's one slot.
    await refuse(phone, 'pete');
    expect((await history.list({ phoneNumber: phone })).map((e) => e.owner)).toEqual(['pete']);
    expect((await history.list({ owner: 'olga' })).map((e) => e.phoneNumber)).toEqual([phone]);

    await forget({ phoneNumber: phone });

    expect(await history.list({ owner: 'olga' })).toEqual([]);
    expect(await history.list({ owner: 'pete' })).toEqual([]);
  });
});
