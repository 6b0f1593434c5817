import { describe, expect, it } from '@jest/globals';
import { MemoryStore } from '../store/memory.store.js';
import { ProtectionKeys } from './protection-keys.js';
import { RequestRateLimits } from './request-rate-limits.js';
import { freeCallersOf } from './start-callers.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

describe('free starts (methods charged on proof)', () => {
  const clock = { now: 1_700_000_000_000 };
  /** Limits with only the free budget on: 2 a window (`windowMs`), or off. */
  const freeLimits = (store: MemoryStore, windowMs: number | false = 600_000) =>
    new RequestRateLimits(
      store,
      {
        enabled: true,
        startPerIp: false,
        freeStartPerCaller: windowMs === false ? false : { points: 2, windowMs },
        startPerPhoneAndCaller: false,
        startPerPhone: false,
        checkPerIp: false,
      },
      SPEC_DATA_KEYS,
    );

  it('each caller (client key, network, owner) has its own budget; a refused start gives back what it took', async () => {
    const store = new MemoryStore({ clock: () => clock.now });
    const limits = freeLimits(store);
    await limits.countFreeStart(['client:a', 'owner:x']);
    await limits.countFreeStart(['client:b', 'owner:x']);
    // The owner's third from yet another address: refused, and client:c's point given back.
    await expect(limits.countFreeStart(['client:c', 'owner:x'])).rejects.toMatchObject({
      reason: 'start_ip_limit',
    });
    await limits.countFreeStart(['client:c']);
    await limits.countFreeStart(['client:c']);
    await expect(limits.countFreeStart(['client:c'])).rejects.toMatchObject({ reason: 'start_ip_limit' });
    await store.close();
  });

  /** Whether each of `n` free starts of `callers` is admitted, one after another. */
  const admitted = async (limits: RequestRateLimits, callers: string[], n: number): Promise<boolean[]> => {
    const out: boolean[] = [];
    for (let i = 0; i < n; i++)
      out.push(
        await limits.countFreeStart(callers).then(
          () => true,
          () => false,
        ),
      );
    return out;
  };

  it("a proved free start gives its points back to every one of its callers' budgets, once", async () => {
    const now = { t: 1_700_000_000_000 };
    const store = new MemoryStore({ clock: () => now.t });
    const limits = freeLimits(store);
    const network = ['client:a', 'network:203.0.113.0/24'];
    const first = await limits.countFreeStart(network);
    await limits.rememberFreeStart('req-1', first);
    await limits.countFreeStart(['client:b', 'network:203.0.113.0/24']);
    now.t += 60_000;
    await limits.freeStartProved('req-1');
    // The network's point and client a's are back: a neighbour starts, and a twice more.
    await limits.countFreeStart(['client:d', 'network:203.0.113.0/24']);
    await limits.countFreeStart(['client:a']);
    await limits.countFreeStart(['client:a']);
    await expect(limits.countFreeStart(['client:a'])).rejects.toMatchObject({ reason: 'start_ip_limit' });
    // A second proof of the same session (an event delivered again) gives nothing more; an unknown one neither.
    await limits.freeStartProved('req-1');
    await limits.freeStartProved('req-unknown');
    await expect(limits.countFreeStart(['client:f', 'network:203.0.113.0/24'])).rejects.toMatchObject({
      reason: 'start_ip_limit',
    });
    await store.close();
  });

  it('a proof within the window gives back; at its end, nothing, and the next window keeps its full count', async () => {
    const windowMs = 600_000;
    for (const [at, givesBack] of [
      [windowMs - 1, true],
      [windowMs, false],
      [windowMs + 1, false],
    ] as const) {
      const now = { t: 1_700_000_000_000 };
      const store = new MemoryStore({ clock: () => now.t });
      const limits = freeLimits(store, windowMs);
      const started = now.t;
      const hold = await limits.countFreeStart(['network:n']);
      expect(hold.until).toBe(started + windowMs);
      now.t += 1_000;
      await limits.rememberFreeStart('req', hold);
      await limits.countFreeStart(['network:n']);
      now.t = started + at;
      await limits.freeStartProved('req');
      // Within the window: one point back. Past it: a fresh window of 2, never 3.
      expect(await admitted(limits, ['network:n'], 3)).toStrictEqual(
        givesBack ? [true, false, false] : [true, true, false],
      );
      await store.close();
    }
  });

  it("keeps a start's proof until the first of its windows ends, in the store's evictable budget", async () => {
    const now = { t: 1_700_000_000_000 };
    const store = new MemoryStore({ clock: () => now.t, maxEntries: 10, maxEvictableEntries: 1000 });
    const limits = freeLimits(store, 10_000);
    await store.set('session:{kept}', 'record', 60_000);
    const first = await limits.countFreeStart(['network:n']);
    now.t += 4_000;
    // A second caller's window is younger: the proof lasts until the older one's end.
    const hold = await limits.countFreeStart(['network:n', 'owner:o']);
    expect(hold.until).toBe(first.until);
    await limits.rememberFreeStart('req', hold);
    now.t = hold.until - 1;
    await expect(store.get(ProtectionKeys.freeStartProof('req'))).resolves.not.toBeNull();
    now.t = hold.until;
    await expect(store.get(ProtectionKeys.freeStartProof('req'))).resolves.toBeNull();
    // A flood of free starts' proofs evicts none of the store's kept entries.
    for (let i = 0; i < 40; i++)
      await limits.rememberFreeStart(`flood-${i}`, { ...hold, until: now.t + 10_000 });
    await expect(store.get('session:{kept}')).resolves.toBe('record');
    await store.close();
  });

  it('overlapping deliveries of one proof give its points back once', async () => {
    const store = new MemoryStore({ clock: () => clock.now });
    const limits = freeLimits(store);
    const net = ['network:203.0.113.0/24'];
    await limits.rememberFreeStart('req-1', await limits.countFreeStart(net));
    await limits.countFreeStart(net);
    await Promise.all([limits.freeStartProved('req-1'), limits.freeStartProved('req-1')]);
    expect(await admitted(limits, net, 2)).toStrictEqual([true, false]);
    await store.close();
  });

  it('a window that ends while a proof is read gives nothing back, to it or to the next', async () => {
    const now = { t: 1_700_000_000_000 };
    const store = new MemoryStore({ clock: () => now.t });
    const limits = freeLimits(store, 10_000);
    const hold = await limits.countFreeStart(['network:n']);
    await limits.rememberFreeStart('req', hold);
    await limits.countFreeStart(['network:n']);
    // The proof is read and claimed at the window's last millisecond; the window ends before its points
    // are given back.
    now.t = hold.until - 1;
    const remove = store.delete.bind(store);
    store.delete = async (key) => {
      await remove(key);
      now.t = hold.until;
    };
    await limits.freeStartProved('req');
    store.delete = remove;
    expect(await admitted(limits, ['network:n'], 3)).toStrictEqual([true, true, false]);
    await store.close();
  });

  it('a start remembered after its window ended, or with the budget off, keeps nothing to give back', async () => {
    const now = { t: 1_700_000_000_000 };
    const store = new MemoryStore({ clock: () => now.t });
    const limits = freeLimits(store, 10_000);
    const hold = await limits.countFreeStart(['network:n']);
    await limits.countFreeStart(['network:n']);
    now.t += 10_000;
    // Remembered at its window's end and proved: the next window holds its 2, not 3.
    await limits.rememberFreeStart('late', hold);
    await limits.freeStartProved('late');
    await limits.countFreeStart(['network:n']);
    await limits.countFreeStart(['network:n']);
    await expect(limits.countFreeStart(['network:n'])).rejects.toMatchObject({ reason: 'start_ip_limit' });
    const off = freeLimits(store, false);
    const none = await off.countFreeStart(['network:n']);
    expect(none.keys).toStrictEqual([]);
    await off.rememberFreeStart('off', none);
    await expect(store.get(ProtectionKeys.freeStartProof('off'))).resolves.toBeNull();
    await off.freeStartProved('off');
    await store.close();
  });

  it('freeCallersOf: the client key, the address when the host keys clients otherwise, its network (/24, /48) and the owner', () => {
    const candidate = { phoneNumber: '+79161234567', method: 'reverse_flash_call', request: {} } as const;
    expect(
      freeCallersOf(
        { ...candidate, clientKey: 'user-1', ip: '2001:db8::1', owner: 'o' },
        { ipv6PrefixLength: 64 },
      ),
    ).toStrictEqual(['client:user-1', 'address:2001:db8::/64', 'network:2001:db8::/48', 'owner:o']);
    expect(
      freeCallersOf(
        { ...candidate, clientKey: '203.0.113.9', ip: '203.0.113.9', owner: undefined },
        { ipv6PrefixLength: 64 },
      ),
    ).toStrictEqual(['client:203.0.113.9', 'network:203.0.113.0/24']);
  });
});
