import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from './memory.store.js';
import { releaseClaim, takeClaim } from './store-claim.js';
import { hostStoreOf } from '../../test/support/host-store.js';

describe('store claims (takeClaim, releaseClaim)', () => {
  it('one holder at a time until its lease ends; a value of its own, after its label', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ clock: () => now });
    const first = await takeClaim(store, 'k', 10_000, 'emitting:');
    expect(first).toMatchObject({ key: 'k', until: 1_010_000 });
    expect(first!.token).toMatch(/^emitting:[0-9a-f-]{36}$/);
    await expect(store.get('k')).resolves.toBe(first!.token);
    now += 9_999;
    await expect(takeClaim(store, 'k', 10_000)).resolves.toBeNull();
    now += 1;
    const second = await takeClaim(store, 'k', 10_000, 'emitting:');
    expect(second!.token).not.toBe(first!.token);
    await store.close();
  });

  it('given back by its holder only, while it is still its own: a lapsed holder frees nothing', async () => {
    let now = 1_000_000;
    const store = new MemoryStore({ clock: () => now });
    const lapsed = (await takeClaim(store, 'k', 10_000))!;
    now += 10_000;
    const current = (await takeClaim(store, 'k', 10_000))!;
    await expect(releaseClaim(store, lapsed)).resolves.toBe(false);
    await expect(store.get('k')).resolves.toBe(current.token);
    await expect(releaseClaim(store, current)).resolves.toBe(true);
    await expect(store.get('k')).resolves.toBeNull();
    await store.close();
  });

  it('on a host’s store without replaceIfEquals: given back up to a second before the lease ends, not within it', async () => {
    let now = 1_000_000;
    const inner = new MemoryStore({ clock: () => now });
    const store = hostStoreOf(inner);
    const claim = (await takeClaim(store, 'k', 10_000))!;
    now += 9_001;
    await expect(releaseClaim(store, claim)).resolves.toBe(false);
    await expect(inner.get('k')).resolves.toBe(claim.token);
    now -= 1;
    await expect(releaseClaim(store, claim)).resolves.toBe(true);
    await expect(inner.get('k')).resolves.toBeNull();
    await inner.close();
  });
});
