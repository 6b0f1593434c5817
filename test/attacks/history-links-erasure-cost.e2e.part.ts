/**
 * Attack (U4): the cost of an erasure an adversary can raise through the history's links. A number's ring links
 * every owner ring that got an entry of it, and the number's erasure reads each linked ring whole: its six
 * shelves' counters, then each shelf's slots up to max(maxEntries, 100) and, past them, up to the shelf's counter
 * (at most 10,000). Owners refused on one number within the hour are one entry in the number's ring (folded)
 * but each links the number's ring to its own.
 *
 * Result (the attack did not find an unbounded read): the erasure's store reads grow by one linked ring's reads
 * per owner (its counters, its shelves' slots, its link's slot and the pair the erasure removes), whatever the
 * number's own ring holds; a linked ring that counted past 100 entries on a shelf costs that many reads more.
 * Bounded per link (LINKS_READ_AT_MOST links of at most 60,008 reads each, all at once): what an adversary's
 * owners add to a victim's erasure is paid per owner admitted to write a refusal (REFUSAL_ENTRIES_PER_CALLER_HOUR
 * per address and network, unlimited in an owner ring holding a paid entry).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { createTestApp } from '../support/verification-app.js';
import { moduleOptions } from '../webhooks/harness.js';

/** `inner`, counting the reads (`get`) of keys under `history:`. */
function countingReads(inner: VerificationStore): { store: VerificationStore; reads: () => number } {
  let reads = 0;
  const store = new Proxy(inner, {
    get(target, property) {
      const value = Reflect.get(target, property, target) as (...args: unknown[]) => unknown;
      if (property === 'get')
        return (key: string) => {
          if (key.startsWith('history:')) reads++;
          return target.get(key);
        };
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store, reads: () => reads };
}

describe('history: what the links cost a number’s erasure', () => {
  const suite = sandboxSuite();
  let inner: MemoryStore | undefined;
  afterEach(async () => {
    await inner?.close();
    inner = undefined;
  });
  let serial = 0;
  const phoneNumber = () =>
    `+791675${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(3, '0')}`;

  /** The store reads of erasing a number refused to `owners` owners within the hour. */
  async function erasureReads(owners: number, extraStartsOfFirst = 0): Promise<number> {
    inner = new MemoryStore({ clock: () => suite.sb.now() });
    const counted = countingReads(inner);
    await suite.host?.close();
    suite.host = await createTestApp({
      platform: 'express',
      module: moduleOptions(suite.sb, { history: {}, store: counted.store }),
    });
    const history = suite.host.app.get(VerificationHistory);
    const phone = phoneNumber();
    const refusal = {
      phoneNumber: phone,
      kind: 'refusal',
      operation: 'start',
      errorCode: 'start_refused',
    } as const;
    for (let i = 0; i < owners; i++) await history.record({ ...refusal, owner: `owner-${i}` });
    // The first owner's ring counts entries of other numbers past its shelf's 100 slots.
    for (let i = 0; i < extraStartsOfFirst; i++)
      await history.record({
        phoneNumber: `${phone.slice(0, -3)}9${String(i).padStart(2, '0')}`,
        owner: 'owner-0',
        kind: 'start',
        method: 'sms',
      });
    expect((await history.list({ phoneNumber: phone })).map((e) => [e.owner, e.count])).toStrictEqual([
      ['owner-0', owners > 1 ? owners : undefined],
    ]);
    const before = counted.reads();
    await suite.host.app.get(VerificationErasure).forget({ phoneNumber: phone });
    const reads = counted.reads() - before;
    // Erased from every owner's history (the first one's other numbers stay, its newest 100).
    for (let i = 0; i < owners; i++)
      expect(await history.list({ owner: `owner-${i}` })).toHaveLength(
        i === 0 ? Math.min(extraStartsOfFirst, 100) : 0,
      );
    return reads;
  }

  it('each owner refused on the number costs its erasure one linked ring’s reads; a linked ring counted past its slots, that many more', async () => {
    const [one, two, twenty] = [await erasureReads(1), await erasureReads(2), await erasureReads(20)];
    const perOwner = two - one;
    expect(twenty - one).toBe(19 * perOwner);
    // Its counters and slots (six shelves of 100), its link's slot and the pair the erasure removes.
    expect(perOwner).toBe(6 + 600 + 2);
    const wide = await erasureReads(1, 150);
    expect(wide - one).toBe(50);
  });
});
