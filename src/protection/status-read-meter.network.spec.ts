import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { STATUS_REFRESHES_PER_NETWORK, StatusReadMeter } from './status-read-meter.js';

const { refreshes: cap, perSecond, windowMs } = STATUS_REFRESHES_PER_NETWORK;
/** A second's first millisecond. */
const S = 1_800_000_000_000;

function options(now: { t: number }) {
  return resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => now.t,
  });
}

const from = (ip: string) => ({ request: { headers: {} }, ip });

function network(now: { t: number }) {
  const store = new MemoryStore({ clock: () => now.t });
  const meter = new StatusReadMeter(store, options(now));
  /** One refresh from `ip` (as `owner`), each a caller of its own unless said. */
  const refresh = (ip: string, owner?: string, m = meter) => m.take(owner, from(ip), 'refresh');
  return { store, meter, refresh };
}

/** The same store seen from an instance whose clock is `skewMs` ahead. */
function skewed(store: VerificationStore, skewMs: number): VerificationStore {
  return new Proxy(store, {
    get: (target, key, receiver) =>
      key === 'now'
        ? () => target.now() + skewMs
        : (Reflect.get(target, key, receiver) as unknown) instanceof Function
          ? (Reflect.get(target, key, receiver) as (...args: unknown[]) => unknown).bind(target)
          : Reflect.get(target, key, receiver),
  });
}

const count = (granted: boolean[]) => granted.filter(Boolean).length;

describe("StatusReadMeter: a network's refreshes", () => {
  it(`takes at most ${cap} a window across its addresses and owners; rebuilds and other networks are not held`, async () => {
    const now = { t: S };
    const { store, meter: m, refresh } = network(now);
    const granted: boolean[] = [];
    for (const at of [0, 1_800]) {
      now.t = S + at;
      for (let i = 0; i < perSecond; i++)
        granted.push(await refresh(`203.0.113.${granted.length + 1}`, i % 2 ? `o${i}` : undefined));
    }
    expect(granted).toStrictEqual(Array<boolean>(cap).fill(true));
    // The window's last millisecond, its last 1,000 ms empty: the window refuses.
    now.t = S + windowMs - 1;
    expect(await refresh('203.0.113.200')).toBe(false);
    expect(await refresh('203.0.113.201', 'carol')).toBe(false);
    expect(await m.take(undefined, from('203.0.113.202'), 'rebuild')).toBe(true);
    expect(await refresh('203.0.114.1')).toBe(true);
    const v6: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) v6.push(await refresh(`2001:db8:1:${i}::1`));
    expect(v6).toStrictEqual([...Array<boolean>(perSecond).fill(true), false]);
    expect(await refresh('2001:db8:2::1')).toBe(true);
    now.t += 1;
    expect(await refresh('203.0.113.204')).toBe(true);
    await store.close();
  });

  it(`takes at most ${perSecond} in any 1,000 ms, a burst at a second's end too; what it refused is given back to the window`, async () => {
    const now = { t: S + 999 };
    const { store, meter: m, refresh } = network(now);
    // 15 pages of 15 addresses poll at once, at a second's last millisecond.
    const burst = await Promise.all(Array.from({ length: 15 }, (_, i) => refresh(`203.0.113.${i + 1}`)));
    expect(count(burst)).toBe(perSecond);
    // Nothing more until 1,000 ms have passed, whatever the second (known spent to the slice's end).
    now.t = S + 1_000;
    expect(await refresh('203.0.113.50')).toBe(false);
    now.t = S + 1_099;
    expect(m.spent(undefined, from('203.0.113.51'), 'refresh')).toBe(true);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.51'), 'refresh')).toBe(false);
    now.t = S + 1_998;
    expect(await refresh('203.0.113.52')).toBe(false);
    // Another instance on the same store counts the same last 1,000 ms.
    const other = new StatusReadMeter(store, options(now));
    expect(await refresh('203.0.113.53', undefined, other)).toBe(false);
    // A full second after the burst: the window's rest, what the burst's refused pages took given back.
    now.t = S + 2_000;
    const rest: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) rest.push(await refresh(`203.0.113.${60 + i}`));
    expect(rest).toStrictEqual([...Array<boolean>(perSecond).fill(true), false]);
    // The window (from the burst's millisecond) refuses to its end, its last 1,000 ms empty.
    now.t = S + 999 + windowMs - 1;
    expect(await refresh('203.0.113.80')).toBe(false);
    expect(m.spent(undefined, from('203.0.113.81'), 'refresh')).toBe(true);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.82'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.82')).toBe(true);
    await store.close();
  });

  it('knows a full last second spent to its slice end, past a window that ends sooner', async () => {
    const now = { t: S + 950 };
    const { store, meter: m, refresh } = network(now);
    for (let i = 0; i < perSecond; i++) expect(await refresh(`203.0.113.${i + 1}`)).toBe(true);
    now.t = S + 2_950;
    for (let i = 0; i < perSecond; i++) expect(await refresh(`203.0.113.${20 + i}`)).toBe(true);
    // Refused by the last second at S+3.920; the window (from S+950) ends at S+3.950, the slice at S+4.000.
    now.t = S + 3_920;
    expect(await refresh('203.0.113.40')).toBe(false);
    now.t = S + 3_960;
    expect(m.spent(undefined, from('203.0.113.41'), 'refresh')).toBe(true);
    now.t = S + 4_000;
    expect(m.spent(undefined, from('203.0.113.41'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.41')).toBe(true);
    await store.close();
  });

  it("knows a full window spent to its slice's end at most: reads refused meanwhile give back, the network reads again", async () => {
    const now = { t: S };
    const { store, meter: m, refresh } = network(now);
    // One address spends its own refreshes; at S+1.1 four neighbours: the window holds 10 of 12.
    for (let i = 0; i < perSecond; i++) expect(await refresh('203.0.113.7')).toBe(true);
    now.t = S + 1_100;
    for (let i = 0; i < 4; i++) expect(await refresh(`203.0.113.${20 + i}`)).toBe(true);
    // At S+2.2 (the last 1,000 ms empty), the spent address polls twice as a neighbour polls once: the
    // neighbour meets a window its refused polls fill for a moment, and is answered as stored.
    now.t = S + 2_200;
    const burst = await Promise.all([
      refresh('203.0.113.7'),
      refresh('203.0.113.7'),
      refresh('203.0.113.30'),
    ]);
    expect(burst).toStrictEqual([false, false, false]);
    // Known spent to the slice's end (S+2.3), not to the window's (S+3): one tick before, still spent;
    // at the bound, the two refused polls given back, a neighbour's refresh goes upstream again.
    now.t = S + 2_299;
    expect(m.spent(undefined, from('203.0.113.31'), 'refresh')).toBe(true);
    now.t = S + 2_300;
    expect(m.spent(undefined, from('203.0.113.31'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.31')).toBe(true);
    expect(await refresh('203.0.113.32')).toBe(true);
    expect(await refresh('203.0.113.33')).toBe(false);
    await store.close();
  });

  it('knows a full window spent to its end, when the window ends before the slice', async () => {
    const now = { t: S + 950 };
    const { store, meter: m, refresh } = network(now);
    for (let i = 0; i < perSecond; i++) expect(await refresh(`203.0.113.${i + 1}`)).toBe(true);
    now.t = S + 2_000;
    for (let i = 0; i < perSecond; i++) expect(await refresh(`203.0.113.${20 + i}`)).toBe(true);
    // Refused by the window (its last 1,000 ms empty) at S+3.920: the window ends at S+3.950, the slice at S+4.000.
    now.t = S + 3_920;
    expect(await refresh('203.0.113.40')).toBe(false);
    now.t = S + 3_949;
    expect(m.spent(undefined, from('203.0.113.41'), 'refresh')).toBe(true);
    now.t = S + 3_950;
    expect(m.spent(undefined, from('203.0.113.41'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.41')).toBe(true);
    await store.close();
  });

  it("counts a slice's refreshes for as long as a later slice's 1,000 ms hold it", async () => {
    // Written at its slice's first millisecond, counted up to 1,100 ms later.
    const now = { t: S + 900 };
    const { store, refresh } = network(now);
    for (let i = 0; i < perSecond; i++) expect(await refresh(`203.0.113.${i + 1}`)).toBe(true);
    now.t = S + 1_999;
    expect(await refresh('203.0.113.20')).toBe(false);
    now.t = S + 2_000;
    expect(await refresh('203.0.113.21')).toBe(true);
    await store.close();
  });

  it('counts what an instance whose clock is ahead wrote at a second bound', async () => {
    const now = { t: S + 999 };
    const { store, refresh } = network(now);
    const ahead = new StatusReadMeter(skewed(store, 50), options({ t: 0 }));
    const granted: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) granted.push(await refresh(`203.0.113.${i + 1}`, undefined, ahead));
    for (let i = 0; i <= perSecond; i++) granted.push(await refresh(`203.0.113.${20 + i}`));
    expect(count(granted)).toBe(perSecond);
    await store.close();
  });

  it("a read its caller's own meter refused takes nothing of its network's last second", async () => {
    const now = { t: S };
    const { store, refresh } = network(now);
    // One address past its own refreshes (6 a window), polling on.
    for (let i = 0; i < perSecond; i++) expect(await refresh('198.51.100.7')).toBe(true);
    now.t = S + 2_000;
    expect(await Promise.all(Array.from({ length: 5 }, () => refresh('198.51.100.7')))).toStrictEqual(
      Array<boolean>(5).fill(false),
    );
    // Its neighbours have the last second's share, and the window's rest.
    const neighbours: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) neighbours.push(await refresh(`198.51.100.${20 + i}`));
    expect(neighbours).toStrictEqual([...Array<boolean>(perSecond).fill(true), false]);
    await store.close();
  });
});
