/**
 * Attack S (finding U3-4): an erasure rewrites, or deletes, a slot of the other side's ring it read a moment
 * before; a new entry may have taken that slot meanwhile (the shelf went round: `maxEntries` entries written
 * since), and the erasure's write lands over it.
 * - An owner erased: its entry in a number's ring is re-sealed without the owner (`anonymise`), written back
 *   into the slot it was read from: a third owner's new entry of the number, written there meanwhile, is lost.
 * - A number erased: its entry in an owner's ring is deleted by slot: the owner's new entry of another
 *   number, written there meanwhile, is deleted.
 *
 * Expected: an erasure removes only what it read; an entry written since stays (a compare-and-set of the slot).
 * Medium (support's trail of a number loses who verified it or tried to; no personal data kept).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { StoreWriteOptions, VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { createTestApp, type TestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** Once armed, runs `meanwhile` before the first write (set, delete or replace) of a key `at` matches. */
class Gate {
  #at: RegExp | undefined;
  #meanwhile: () => Promise<void> = async () => undefined;
  arm(at: RegExp, meanwhile: () => Promise<void>): void {
    this.#at = at;
    this.#meanwhile = meanwhile;
  }
  async pass(key: string): Promise<void> {
    if (this.#at === undefined || !this.#at.test(key)) return;
    this.#at = undefined;
    await this.#meanwhile();
  }
}

class GatedMemoryStore extends MemoryStore {
  readonly gate = new Gate();
  override async set(key: string, value: string, ttlMs: number, options?: StoreWriteOptions) {
    await this.gate.pass(key);
    return super.set(key, value, ttlMs, options);
  }
  override async delete(key: string) {
    await this.gate.pass(key);
    return super.delete(key);
  }
  override async replaceIfEquals(key: string, expected: string, value: string | null, ttlMs: number) {
    await this.gate.pass(key);
    return super.replaceIfEquals(key, expected, value, ttlMs);
  }
}

class GatedRedisStore extends RedisStore {
  readonly gate = new Gate();
  override async set(key: string, value: string, ttlMs: number) {
    await this.gate.pass(key);
    return super.set(key, value, ttlMs);
  }
  override async delete(key: string) {
    await this.gate.pass(key);
    return super.delete(key);
  }
  override async replaceIfEquals(key: string, expected: string, value: string | null, ttlMs: number) {
    await this.gate.pass(key);
    return super.replaceIfEquals(key, expected, value, ttlMs);
  }
}

type Gated = VerificationStore & { gate: Gate };

describe.each([
  ['MemoryStore', (clock: () => number): Gated => new GatedMemoryStore({ clock })],
  [
    'RedisStore',
    (clock: () => number): Gated =>
      new GatedRedisStore({
        url: sharedRedisUrl(),
        keyPrefix: `history-slot-retaken:${randomUUID()}:`,
        clock,
        commandTimeoutMs: 10_000,
      }),
  ],
])('history: an erasure and a slot of the other side retaken meanwhile (%s)', (_label, make) => {
  const suite = sandboxSuite();
  let store: Gated | undefined;
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    await store?.close();
    host = store = undefined;
  });

  async function boot(): Promise<{ history: VerificationHistory; store: Gated }> {
    store = make(() => suite.sb.now());
    // Two entries a shelf: the third of a ring's failed outcomes takes the first's slot.
    host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { history: { maxEntries: 2 }, store }),
    });
    return { history: host.app.get(VerificationHistory), store };
  }

  const failed = (phoneNumber: string, owner: string) =>
    ({
      kind: 'outcome',
      status: 'failed',
      method: 'sms',
      phoneNumber,
      owner,
      requestId: randomUUID(),
    }) as const;
  let serial = 0;
  const phone = () =>
    `+7916761${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

  it("an owner's erasure keeps a new entry of the number written into the slot its entry there was read from", async () => {
    const { history, store } = await boot();
    const number = phone();
    const [alice, bob, carol] = ['alice', 'bob', 'carol'].map((name) => `${name}-${randomUUID()}`);
    await history.record(failed(number, alice));
    await suite.sb.advance(1_000);
    await history.record(failed(number, bob));
    await suite.sb.advance(1_000);
    // Alice's erasure has read the number's ring; carol's failure lands in alice's slot before it is rewritten.
    store.gate.arm(/^history:\{n:[^}]+\}:outcome:0$/, async () => {
      await history.record(failed(number, carol));
    });
    await history.forget({ owner: alice });

    expect((await history.list({ phoneNumber: number })).map((e) => e.owner)).toEqual([bob, carol]);
    expect((await history.list({ owner: carol })).map((e) => e.phoneNumber)).toEqual([number]);
  });

  it("a number's erasure keeps an owner's new entry of another number written into the slot its entry there was read from", async () => {
    const { history, store } = await boot();
    const [erased, kept, other] = [phone(), phone(), phone()];
    const owner = `dana-${randomUUID()}`;
    await history.record(failed(erased, owner));
    await suite.sb.advance(1_000);
    await history.record(failed(kept, owner));
    await suite.sb.advance(1_000);
    // The number's erasure has read the owner's ring; the owner's failure on another number lands in the
    // erased number's slot before it is deleted.
    store.gate.arm(/^history:\{o:[^}]+\}:outcome:0$/, async () => {
      await history.record(failed(other, owner));
    });
    await history.forget({ phoneNumber: erased });

    expect((await history.list({ owner })).map((e) => e.phoneNumber)).toEqual([kept, other]);
    expect(await history.list({ phoneNumber: erased })).toEqual([]);
  });
});
