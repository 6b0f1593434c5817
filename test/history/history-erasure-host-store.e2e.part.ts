/**
 * History erasure on a host's own store without `replaceIfEquals` (the optional atomic replace): the erasure
 * falls back to a read and then a write (store-replace.ts). What a host sees must not change: an owner's
 * erasure keeps that owner's entry in a number's ring without the owner, until the entry's own end (`at` +
 * retentionDays, one tick before it still listed); a number's erasure takes its entry out of its owner's ring
 * and leaves the owner's other entries; on a store that ignores `renew` too, a ring wider than the default is
 * erased whole.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { hostStoreOf } from '../support/host-store.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { createTestApp, ONE_PLATFORM } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

const DAY = 86_400_000;

describe.each(ONE_PLATFORM)("history erasure on a host's store without replaceIfEquals (%s)", (platform) => {
  const suite = sandboxSuite();
  let inner: MemoryStore | undefined;
  afterEach(async () => {
    await inner?.close();
    inner = undefined;
  });

  async function boot(): Promise<VerificationHistory> {
    inner = new MemoryStore({ clock: () => suite.sb.now() });
    const store = hostStoreOf(inner);
    expect(store.replaceIfEquals).toBeUndefined();
    suite.host = await createTestApp({
      platform,
      module: moduleOptions(suite.sb, { history: { retentionDays: 2 }, store }),
    });
    return suite.host.app.get(VerificationHistory);
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
    `+7916762${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

  it("an owner's erasure keeps its entry in the number's ring without the owner, until the entry's own end", async () => {
    const history = await boot();
    const number = phone();
    const [alice, bob] = ['alice', 'bob'].map((name) => `${name}-${randomUUID()}`);
    await history.record(failed(number, alice));
    const at = suite.sb.now();
    await suite.sb.advance(1_000);
    await history.record(failed(number, bob));
    await suite.sb.advance(DAY);

    await history.forget({ owner: alice });
    expect((await history.list({ phoneNumber: number })).map((e) => e.owner)).toEqual([undefined, bob]);
    expect(await history.list({ owner: alice })).toEqual([]);
    // Its own end, not a new retention from the erasure: one tick before it is listed, at it gone.
    await suite.sb.advance(at + 2 * DAY - 1 - suite.sb.now());
    expect((await history.list({ phoneNumber: number })).map((e) => e.owner)).toEqual([undefined, bob]);
    await suite.sb.advance(1);
    expect((await history.list({ phoneNumber: number })).map((e) => e.owner)).toEqual([bob]);
  });

  it("a number's erasure on a store that ignores renew: its entries past the default's 100 slots go too, though their shelf's counter restarted", async () => {
    inner = new MemoryStore({ clock: () => suite.sb.now() });
    const host = hostStoreOf(inner);
    // Without `renew`, a counter lives from its first write: it ends while the entries it numbered live on.
    const store = {
      ...host,
      increment: (key: string, by: number, ttlMs: number) => host.increment(key, by, ttlMs),
    };
    suite.host = await createTestApp({
      platform,
      module: moduleOptions(suite.sb, { history: { retentionDays: 2, maxEntries: 150 }, store }),
    });
    const history = suite.host.app.get(VerificationHistory);
    const number = phone();
    const owner = `zoe-${randomUUID()}`;
    await history.record(failed(number, owner));
    await suite.sb.advance(DAY);
    for (let i = 0; i < 100; i++) await history.record(failed(number, owner));
    // The first entry and the shelf's counter have ended; the hundred written a day later, in slots 1 to 100, live.
    await suite.sb.advance(DAY + 1);
    expect(await history.list({ phoneNumber: number })).toHaveLength(100);

    await history.forget({ phoneNumber: number });
    expect(await history.list({ phoneNumber: number })).toEqual([]);
    expect(await history.list({ owner })).toEqual([]);
  });

  it("a number's erasure takes its entry out of its owner's ring and leaves the owner's other entries", async () => {
    const history = await boot();
    const [erased, kept] = [phone(), phone()];
    const owner = `dana-${randomUUID()}`;
    await history.record(failed(erased, owner));
    await suite.sb.advance(1_000);
    await history.record(failed(kept, owner));

    await history.forget({ phoneNumber: erased });
    expect((await history.list({ owner })).map((e) => e.phoneNumber)).toEqual([kept]);
    expect(await history.list({ phoneNumber: erased })).toEqual([]);
    expect((await history.list({ phoneNumber: kept })).map((e) => e.owner)).toEqual([owner]);
  });
});
