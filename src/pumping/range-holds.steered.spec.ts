/**
 * A start steered by its own twin is remembered under its number, and a proof of that number takes
 * its counted evidence back, once: each number's attempt is its own (a second number's steer neither
 * replaces the first's nor is taken back by the first's proof), and the once-only claim is per attempt.
 */
import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { RangeHolds } from './range-holds.js';

const WINDOW_MS = 3_600_000;

function holds() {
  const store = new MemoryStore();
  return {
    store,
    holds: new RangeHolds(store, { windowMs: WINDOW_MS, recordTtlMs: WINDOW_MS }, SPEC_DATA_KEYS),
  };
}

/** A steered attempt's evidence: one counter of its own, counted once. */
async function steer(store: MemoryStore, holds: RangeHolds, phone: string, counter: string): Promise<void> {
  await store.increment(counter, 1, WINDOW_MS);
  await holds.rememberSteered(phone, { counters: [[counter, false, WINDOW_MS]], shares: [] });
}

const count = async (store: MemoryStore, key: string) => Number((await store.get(key)) ?? 0);

describe('RangeHolds: steered attempts taken back by a proof', () => {
  it("two numbers steered in one window: each proof gives back its own number's evidence, once", async () => {
    const { store, holds: h } = holds();
    await steer(store, h, '+79161110001', 'spec:a');
    await steer(store, h, '+79161110002', 'spec:b');

    await h.takeSteered('+79161110001');
    expect([await count(store, 'spec:a'), await count(store, 'spec:b')]).toEqual([0, 1]);
    // A second proof of the same number finds nothing more to give back.
    await h.takeSteered('+79161110001');
    expect([await count(store, 'spec:a'), await count(store, 'spec:b')]).toEqual([0, 1]);

    await h.takeSteered('+79161110002');
    expect([await count(store, 'spec:a'), await count(store, 'spec:b')]).toEqual([0, 0]);
    await store.close();
  });

  it('a number never steered gives nothing back', async () => {
    const { store, holds: h } = holds();
    await steer(store, h, '+79161110003', 'spec:c');
    await h.takeSteered('+79161110004');
    expect(await count(store, 'spec:c')).toBe(1);
    await store.close();
  });
});
