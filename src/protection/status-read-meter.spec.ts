import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  STATUS_READS_PER_CALLER,
  STATUS_REFRESHES_PER_NETWORK,
  StatusReadMeter,
  type UpstreamRead,
} from './status-read-meter.js';

const { points, refreshes, windowMs } = STATUS_READS_PER_CALLER;

function resolvedOptions(now: { t: number }, limits = {}) {
  return resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => now.t,
    limits,
  });
}

function meter(now: { t: number }, limits = {}) {
  const store = new MemoryStore({ clock: () => now.t });
  return { store, meter: new StatusReadMeter(store, resolvedOptions(now, limits)) };
}

/** Counts the store's increments from now on (the meter's only writes). */
function countingIncrements(store: MemoryStore): () => number {
  let n = 0;
  const increment = store.increment.bind(store);
  store.increment = (...args) => {
    n++;
    return increment(...args);
  };
  return () => n;
}

async function takes(
  m: StatusReadMeter,
  n: number,
  owner?: string,
  ip = '203.0.113.7',
  read: UpstreamRead = 'rebuild',
): Promise<boolean[]> {
  const out: boolean[] = [];
  for (let i = 0; i < n; i++) out.push(await m.take(owner, { request: { headers: {} }, ip }, read));
  return out;
}

describe('StatusReadMeter', () => {
  it(`allows ${points} upstream reads per caller and window, refuses the next, and allows again once the window has passed`, async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    expect(await takes(m, points + 1)).toStrictEqual([...Array<boolean>(points).fill(true), false]);
    now.t += windowMs - 1;
    expect(await takes(m, 1)).toStrictEqual([false]);
    now.t += 1;
    expect(await takes(m, 1)).toStrictEqual([true]);
    await store.close();
  });

  it('meters each caller apart: another address, another owner; an owner is metered by owner whatever its address', async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    await takes(m, points);
    expect(await takes(m, 1, undefined, '198.51.100.9')).toStrictEqual([true]);
    expect(await takes(m, points, 'alice')).toStrictEqual(Array<boolean>(points).fill(true));
    expect(await takes(m, 1, 'alice', '198.51.100.10')).toStrictEqual([false]);
    expect(await takes(m, 1, 'bob')).toStrictEqual([true]);
    await store.close();
  });

  it('meters nothing the host asks itself (no owner, no request): never one meter for every host call', async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    const own: boolean[] = [];
    for (let i = 0; i < points + 2; i++) own.push(await m.take(undefined, undefined, 'rebuild'));
    expect(own).toStrictEqual(Array<boolean>(points + 2).fill(true));
    await store.close();
  });

  it('meters nothing when the host turned the limits off (limits.enabled: false)', async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now, { enabled: false });
    expect(await takes(m, points + 2)).toStrictEqual(Array<boolean>(points + 2).fill(true));
    await store.close();
  });

  it("meters by the host's limits.key when it names the caller", async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now, { key: (req: unknown) => (req as { account?: string }).account });
    for (let i = 0; i < points; i++)
      await m.take(undefined, { request: { account: 'a1' }, ip: '203.0.113.7' }, 'rebuild');
    expect(await m.take(undefined, { request: { account: 'a1' }, ip: '198.51.100.1' }, 'rebuild')).toBe(
      false,
    );
    expect(await m.take(undefined, { request: { account: 'a2' }, ip: '203.0.113.7' }, 'rebuild')).toBe(true);
    await store.close();
  });

  it(`refreshes take at most ${refreshes} of a window: however many more are refused, a rebuild still has the rest, and the next window refreshes again`, async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    // An owner's refreshes from a new network each time: its own meter is the one that binds.
    let net = 0;
    const refresh = async (n: number) => {
      const out: boolean[] = [];
      for (let i = 0; i < n; i++)
        out.push(await m.take('pat', { request: { headers: {} }, ip: `203.0.${net++}.7` }, 'refresh'));
      return out;
    };
    expect(await refresh(refreshes + 1)).toStrictEqual([...Array<boolean>(refreshes).fill(true), false]);
    // The owner keeps polling: refused, and never spending a rebuild's points.
    expect(await refresh(20)).toStrictEqual(Array<boolean>(20).fill(false));
    expect(await takes(m, points - refreshes + 1, 'pat')).toStrictEqual([
      ...Array<boolean>(points - refreshes).fill(true),
      false,
    ]);
    now.t += windowMs - 1;
    expect(await refresh(1)).toStrictEqual([false]);
    now.t += 1;
    expect(await refresh(1)).toStrictEqual([true]);
    await store.close();
  });

  it("a caller's refused read given back once its network's window has ended gives the next window nothing", async () => {
    const start = 1_800_000_000_000;
    const now = { t: start };
    const { store, meter: m } = meter(now);
    const network = STATUS_REFRESHES_PER_NETWORK;
    const from = (ip: string) => ({ request: { headers: {} }, ip });
    // One caller spends its own refreshes, spread over its network's windows when they are the smaller.
    for (let i = 0; i < refreshes; i++) {
      if (i > 0 && i % network.refreshes === 0) now.t += network.windowMs;
      expect(await m.take(undefined, from('198.51.100.7'), 'refresh')).toBe(true);
    }
    // Its next read, refused by its own meter at the network window's last millisecond; the window ends
    // between the network's take and the give-back.
    const networkEnds = start + Math.floor((now.t - start) / network.windowMs + 1) * network.windowMs;
    const ends = Math.min(networkEnds, start + windowMs);
    now.t = ends - 1;
    const increment = store.increment.bind(store);
    store.increment = async (...args) => {
      const counted = await increment(...args);
      if (args[1] === 1) now.t = ends;
      return counted;
    };
    expect(await m.take(undefined, from('198.51.100.7'), 'refresh')).toBe(false);
    store.increment = increment;
    // The next window holds the network's full count of refreshes for its others, and not one more.
    const others: boolean[] = [];
    // Spread so that the last second never holds more than its share: the window binds at its end.
    for (const [at, n] of [
      [0, network.perSecond],
      [1_999, network.perSecond - 1],
      [2_000, 1],
      [2_999, 1],
    ] as const) {
      now.t = ends + at;
      for (let i = 0; i < n; i++)
        others.push(await m.take(undefined, from(`198.51.100.${20 + others.length}`), 'refresh'));
    }
    expect(others).toStrictEqual([...Array<boolean>(network.refreshes).fill(true), false]);
    await store.close();
  });

  it("answers a meter it found spent without the store until the window ends; a caller's own refusal spends nothing of its network's", async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    const from = (ip: string) => ({ request: { headers: {} }, ip });
    const refresh = (ip: string) => m.take(undefined, from(ip), 'refresh');
    const started = now.t;
    // The caller's refreshes, within its network's (a window of its own, shorter than the caller's).
    const network = STATUS_REFRESHES_PER_NETWORK;
    for (let i = 0; i < refreshes; i++) {
      if (i > 0 && i % network.refreshes === 0) now.t += network.windowMs;
      expect(await refresh('203.0.113.7')).toBe(true);
    }
    expect(m.spent(undefined, from('203.0.113.7'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.7')).toBe(false);
    expect(m.spent(undefined, from('203.0.113.7'), 'refresh')).toBe(true);
    // Its rebuilds still have their points; a neighbour of its network still refreshes, as often as the
    // network's window has left: the caller's refused read took none of it.
    expect(m.spent(undefined, from('203.0.113.7'), 'rebuild')).toBe(false);
    expect(m.spent(undefined, from('203.0.113.8'), 'refresh')).toBe(false);
    const left = network.refreshes - (refreshes % network.refreshes || network.refreshes);
    now.t += 2_000; // the caller's took the last second's share
    for (let i = 0; i < left; i++) expect(await refresh('203.0.113.8')).toBe(true);
    expect(await refresh('203.0.113.8')).toBe(false);
    // Another instance has seen nothing: it asks the store, which refuses as well.
    const other = new StatusReadMeter(store, resolvedOptions(now));
    expect(other.spent(undefined, from('203.0.113.7'), 'refresh')).toBe(false);
    expect(await other.take(undefined, from('203.0.113.7'), 'refresh')).toBe(false);
    // Nothing more is counted while it is known spent: the window's end frees it as the store does.
    const counted = countingIncrements(store);
    expect(await refresh('203.0.113.7')).toBe(false);
    expect(counted()).toBe(0);
    now.t = started + windowMs - 1;
    expect(m.spent(undefined, from('203.0.113.7'), 'refresh')).toBe(true);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.7'), 'refresh')).toBe(false);
    now.t += 999; // its network's last second held its neighbour's polls
    expect(await refresh('203.0.113.7')).toBe(true);
    await store.close();
  });

  it("remembers every meter it found spent, a rebuild's too, and nothing of a meter not past its limit", async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    const from = (ip: string) => ({ request: { headers: {} }, ip });
    const cap = STATUS_REFRESHES_PER_NETWORK.refreshes;
    // A network's refreshes up to its limit: nothing known spent yet, its next one is still the store's to refuse.
    for (let i = 0; i < cap; i++) {
      if (i > 0 && i % STATUS_REFRESHES_PER_NETWORK.perSecond === 0) now.t += 2_000;
      expect(await m.take(undefined, from(`198.51.100.${i + 1}`), 'refresh')).toBe(true);
    }
    expect(m.spent(undefined, from('198.51.100.200'), 'refresh')).toBe(false);
    expect(await m.take(undefined, from('198.51.100.200'), 'refresh')).toBe(false);
    expect(m.spent(undefined, from('198.51.100.201'), 'refresh')).toBe(true);
    // Two callers past their points: both remembered, each for its rebuilds.
    await takes(m, points + 1, undefined, '203.0.113.7');
    await takes(m, points + 1, 'dana');
    expect(m.spent(undefined, from('203.0.113.7'), 'rebuild')).toBe(true);
    expect(m.spent('dana', from('192.0.2.1'), 'rebuild')).toBe(true);
    // The host's own call is never metered, whatever is remembered; an owner's read without a request is its own.
    expect(m.spent(undefined, undefined, 'refresh')).toBe(false);
    expect(await m.take('erin', undefined, 'refresh')).toBe(true);
    await store.close();
  });

  it("keeps its counters in the store's evictable budget: a flood of callers evicts none of the store's other entries", async () => {
    const now = { t: 1_800_000_000_000 };
    const store = new MemoryStore({ clock: () => now.t, maxEntries: 10, maxEvictableEntries: 1000 });
    const m = new StatusReadMeter(store, resolvedOptions(now));
    await store.set('session:{kept}', 'record', 60_000);
    for (let i = 0; i < 40; i++)
      await m.take(undefined, { request: { headers: {} }, ip: `203.0.${i}.1` }, 'refresh');
    // A caller past its own meter (its refreshes spread over its network's windows), polling on: its
    // network's refreshes are given back each time.
    const network = STATUS_REFRESHES_PER_NETWORK;
    const refresh = (ip: string) => m.take(undefined, { request: { headers: {} }, ip }, 'refresh');
    for (let i = 0; i < refreshes; i++) {
      if (i > 0 && i % network.refreshes === 0) now.t += network.windowMs;
      expect(await refresh('198.51.100.7')).toBe(true);
    }
    for (let i = 0; i < 20; i++) expect(await refresh('198.51.100.7')).toBe(false);
    await expect(store.get('session:{kept}')).resolves.toBe('record');
    // Its refused reads took nothing of its network's: neighbours still have the rest of the window.
    const left = network.refreshes - (refreshes % network.refreshes || network.refreshes);
    now.t += 2_000; // the caller's took the last second's share
    for (let i = 0; i < left; i++) expect(await refresh(`198.51.100.${20 + i}`)).toBe(true);
    expect(await refresh('198.51.100.99')).toBe(false);
    await store.close();
  });

  it('remembers at most 10,000 spent meters: past that it forgets them all and asks the store again', async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    const spend = (owner: string) => takes(m, points + 1, owner);
    for (let i = 0; i < 10_000; i++) await spend(`o${i}`);
    expect(m.spent('o0', undefined, 'rebuild')).toBe(true);
    expect(m.spent('o9999', undefined, 'rebuild')).toBe(true);
    await spend('o10000');
    expect(m.spent('o0', undefined, 'rebuild')).toBe(false);
    expect(m.spent('o10000', undefined, 'rebuild')).toBe(true);
    // The store still refuses a forgotten one.
    expect(await m.take('o0', undefined, 'rebuild')).toBe(false);
    await store.close();
  });

  it('rebuilds may take every point of a window: a refresh after them is refused too', async () => {
    const now = { t: 1_800_000_000_000 };
    const { store, meter: m } = meter(now);
    expect(await takes(m, points)).toStrictEqual(Array<boolean>(points).fill(true));
    expect(await takes(m, 1, undefined, '203.0.113.7', 'refresh')).toStrictEqual([false]);
    await store.close();
  });
});
