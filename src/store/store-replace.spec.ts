import { afterEach, describe, expect, it } from '@jest/globals';
import { MemoryStore } from './memory.store.js';
import { replaceIfEquals } from './store-replace.js';
import { hostStoreOf } from '../../test/support/host-store.js';
import type { VerificationStore } from './verification-store.interface.js';

describe.each([
  ['the store’s own atomic replace', (inner: MemoryStore): VerificationStore => inner],
  [
    'a host’s store without it (a read, then the write)',
    (inner: MemoryStore) => hostStoreOf(inner, { delayedWrites: true }),
  ],
])('replaceIfEquals: %s', (_, shape) => {
  let now = 1_000_000;
  let inner: MemoryStore;
  let store: VerificationStore;
  const open = (maxEvictableEntries?: number) => {
    now = 1_000_000;
    inner = new MemoryStore({ clock: () => now, maxEvictableEntries });
    store = shape(inner);
  };
  afterEach(async () => {
    // A write left in flight lands before the store closes: a late write fails as the assertion it broke.
    await new Promise((resolve) => setTimeout(resolve, 10));
    await inner.close();
  });

  it('replaces a value equal to the one expected, for the new TTL, and says so once the value is there', async () => {
    open();
    await inner.set('k', 'old', 60_000);
    await expect(replaceIfEquals(store, 'k', 'old', 'new', 5_000)).resolves.toBe(true);
    await expect(inner.get('k')).resolves.toBe('new');
    now += 4_999;
    await expect(inner.get('k')).resolves.toBe('new');
    now += 1;
    await expect(inner.get('k')).resolves.toBeNull();
  });

  it('writes the new value with the options given: an evictable one makes room for another caller’s', async () => {
    open(1);
    await inner.set('k', 'old', 60_000, { evictable: true });
    await expect(
      replaceIfEquals(store, 'k', 'old', 'new', 60_000, undefined, { evictable: true }),
    ).resolves.toBe(true);
    await inner.set('other', '1', 60_000, { evictable: true });
    await expect(inner.get('k')).resolves.toBeNull();
  });

  it('removes the key when the new value is null, and it is gone once it answers', async () => {
    open();
    await inner.set('k', 'old', 60_000);
    await expect(replaceIfEquals(store, 'k', 'old', null, 5_000)).resolves.toBe(true);
    await expect(inner.get('k')).resolves.toBeNull();
  });

  it('leaves any other value as it is, and an absent key absent', async () => {
    open();
    await inner.set('k', 'taken since', 60_000);
    await expect(replaceIfEquals(store, 'k', 'old', 'new', 5_000)).resolves.toBe(false);
    await expect(replaceIfEquals(store, 'k', 'old', null, 5_000)).resolves.toBe(false);
    await expect(inner.get('k')).resolves.toBe('taken since');
    await expect(replaceIfEquals(store, 'absent', 'old', 'new', 5_000)).resolves.toBe(false);
    await expect(inner.get('absent')).resolves.toBeNull();
  });

  it('replaces an expired value no more than an absent one', async () => {
    open();
    await inner.set('k', 'old', 1_000);
    now += 1_000;
    await expect(replaceIfEquals(store, 'k', 'old', 'new', 5_000)).resolves.toBe(false);
    await expect(inner.get('k')).resolves.toBeNull();
  });
});

describe('replaceIfEquals on a host’s store without it, near the end of the expected value', () => {
  it('writes up to a second before the expected value ends, not within that second (another may take it meanwhile)', async () => {
    let now = 1_000_000;
    const inner = new MemoryStore({ clock: () => now });
    const store = hostStoreOf(inner, { delayedWrites: true });
    try {
      await inner.set('k', 'mine', 10_000);
      const until = now + 10_000;
      now = until - 999;
      expect(await replaceIfEquals(store, 'k', 'mine', 'next', 60_000, until)).toBe(false);
      expect(await inner.get('k')).toBe('mine');
      now = until - 1000;
      expect(await replaceIfEquals(store, 'k', 'mine', 'next', 60_000, until)).toBe(true);
      expect(await inner.get('k')).toBe('next');
      // Without a known end, as before.
      now = until - 1;
      expect(await replaceIfEquals(store, 'k', 'next', null, 1)).toBe(true);
      expect(await inner.get('k')).toBeNull();
    } finally {
      await inner.close();
    }
  });
});
