/**
 * Attack (U3): an entry on its way when its number is erased finds the number's erasure mark changed once
 * it has landed, and erases the number's history again, whole. Whatever was written between the erasure's
 * answer and that landing goes too: a start made after the erasure answered (another person's, or the
 * same person's new account: a session the erasure kept, the module goes on following it) loses its entry
 * in the number's history and in its owner's, the trail support reads of a live session. One slow write
 * (a store's latency, a paused instance of two sharing the store) erases what came after the erasure.
 *
 * Expected: the erasure again takes what the first one may have missed (entries written up to its mark),
 * never an entry written after the erasure answered. Medium (history lost: a live session's start no
 * longer listed, its promotion on verification finds no start to copy).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { StoreWriteOptions } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** A store whose first count of a number ring's start shelf, once armed, waits until released. */
class GatedStore extends MemoryStore {
  #armed = false;
  #reached: () => void = () => undefined;
  #gate: Promise<void> = Promise.resolve();
  release: () => void = () => undefined;
  arm(): Promise<void> {
    this.#armed = true;
    this.#gate = new Promise<void>((resolve) => (this.release = resolve));
    return new Promise((resolve) => (this.#reached = resolve));
  }
  override async increment(key: string, by: number, ttlMs: number, options?: StoreWriteOptions) {
    if (this.#armed && /history:\{n:[^}]+\}:start:seq$/.test(key)) {
      this.#armed = false;
      this.#reached();
      await this.#gate;
    }
    return super.increment(key, by, ttlMs, options);
  }
}

describe('history: an erasure redone by an entry that was on its way', () => {
  const suite = sandboxSuite();
  let store: GatedStore | undefined;
  afterEach(async () => {
    store?.release();
    await store?.close();
    store = undefined;
  });

  it('a start made after the erasure answered keeps its entry, under the number and under its owner', async () => {
    store = new GatedStore({ clock: () => suite.sb.now() });
    suite.host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { history: {}, store }),
    });
    const history = suite.host.app.get(VerificationHistory);
    const phone = `+7916750${String(process.pid % 100).padStart(2, '0')}01`;
    const start = (user: string) =>
      call(
        suite.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method: 'sms' },
        { 'x-user': user },
      );

    // The first start's history write is held after it read the number's erasure mark.
    const reached = store.arm();
    const slow = start('ann');
    await reached;
    await suite.host.app.get(VerificationErasure).forget({ phoneNumber: phone });

    // After the erasure answered: a new start of the number, by someone else.
    await suite.sb.advance(60_000);
    const later = await start('bob');
    expect(later.status).toBe(201);
    const listed = async () =>
      (await history.list({ phoneNumber: phone })).map((e) => [e.kind, e.owner, e.requestId]);
    const bobs = [['start', 'bob', expect.any(String)]];
    expect(await listed()).toEqual(bobs);

    // The held write lands: the erasure it raced is redone.
    store.release();
    await slow;

    expect(await history.list({ owner: 'ann' })).toEqual([]);
    expect(await listed()).toEqual(bobs);
    expect((await history.list({ owner: 'bob' })).map((e) => [e.kind, e.phoneNumber])).toEqual([
      ['start', phone],
    ]);
  });
});
