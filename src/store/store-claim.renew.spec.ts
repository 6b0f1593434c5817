import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from './memory.store.js';
import { renewClaim, takeClaim } from './store-claim.js';
import type { VerificationStore } from './verification-store.interface.js';
import { hostStoreOf } from '../../test/support/host-store.js';

/*
 * renewClaim: a holder about to make the call its lease guards renews the lease once part of it is spent (a
 * switch's step claim before its POST), on the store's clock; a claim another took since is not its own.
 */
const stores: [string, (inner: MemoryStore) => VerificationStore][] = [
  ['MemoryStore', (inner) => inner],
  ['a host store without replaceIfEquals', (inner) => hostStoreOf(inner)],
];

describe.each(stores)('renewClaim (%s)', (_, storeOf) => {
  function rig() {
    let now = 1_000_000;
    const inner = new MemoryStore({ clock: () => now });
    const store = storeOf(inner);
    return { inner, store, pass: (ms: number) => void (now += ms), now: () => now };
  }

  it('with no more than `spentMs` of its lease spent, the claim as it is, nothing written', async () => {
    const { inner, store, pass } = rig();
    const claim = (await takeClaim(store, 'k', 60_000))!;
    pass(15_000);
    await expect(renewClaim(store, claim, 60_000, 15_000)).resolves.toBe(claim);
    // Not renewed: it ends at its first lease.
    pass(45_000 - 1);
    await expect(inner.get('k')).resolves.toBe(claim.token);
    pass(1);
    await expect(inner.get('k')).resolves.toBeNull();
    await inner.close();
  });

  it('past `spentMs`, renewed for the whole lease from now: held a lease later less a tick, not at its end', async () => {
    const { inner, store, pass, now } = rig();
    const claim = (await takeClaim(store, 'k', 60_000))!;
    pass(15_001);
    const renewed = await renewClaim(store, claim, 60_000, 15_000);
    expect(renewed).toStrictEqual({ ...claim, until: now() + 60_000 });
    pass(60_000 - 1);
    await expect(inner.get('k')).resolves.toBe(claim.token);
    await expect(takeClaim(store, 'k', 60_000)).resolves.toBeNull();
    pass(1);
    await expect(takeClaim(store, 'k', 60_000)).resolves.not.toBeNull();
    await inner.close();
  });

  it('lapsed and taken by another: null, and the other’s claim stands as it was', async () => {
    const { inner, store, pass } = rig();
    const claim = (await takeClaim(store, 'k', 60_000))!;
    pass(60_000);
    const other = (await takeClaim(store, 'k', 60_000))!;
    await expect(renewClaim(store, claim, 60_000, 15_000)).resolves.toBeNull();
    pass(60_000 - 1);
    await expect(inner.get('k')).resolves.toBe(other.token);
    pass(1);
    await expect(inner.get('k')).resolves.toBeNull();
    await inner.close();
  });

  it('lapsed and taken by nobody: null (not taken again behind another’s back)', async () => {
    const { inner, store, pass } = rig();
    const claim = (await takeClaim(store, 'k', 60_000))!;
    pass(60_000);
    await expect(renewClaim(store, claim, 60_000, 15_000)).resolves.toBeNull();
    await expect(inner.get('k')).resolves.toBeNull();
    await inner.close();
  });
});

describe('renewClaim on a failing store', () => {
  it('the claim as it was: its lease stands, the holder goes on', async () => {
    let now = 1_000_000;
    const inner = new MemoryStore({ clock: () => now });
    const claim = (await takeClaim(inner, 'k', 60_000))!;
    const failing = hostStoreOf(inner, {
      afterGet: () => Promise.reject(new Error('the store is down')),
    });
    now += 30_000;
    await expect(renewClaim(failing, claim, 60_000, 15_000)).resolves.toBe(claim);
    await inner.close();
  });
});
