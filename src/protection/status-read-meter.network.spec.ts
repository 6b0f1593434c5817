import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import { lastSecondCount, STATUS_REFRESHES_PER_NETWORK, StatusReadMeter } from './status-read-meter.js';

const { refreshes: cap, perSecond, windowMs } = STATUS_REFRESHES_PER_NETWORK;
/** A second's first millisecond. */
const S = 1_800_000_000_000;

function network(now: { t: number }) {
  const options = resolveVerificationOptions({
    api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
    clock: () => now.t,
  });
  const store = new MemoryStore({ clock: () => now.t });
  const meter = new StatusReadMeter(store, options);
  const from = (ip: string) => ({ request: { headers: {} }, ip });
  return {
    store,
    meter,
    options,
    from,
    /** One refresh from `ip` (as `owner`), each a caller of its own unless said. */
    refresh: (ip: string, owner?: string) => meter.take(owner, from(ip), 'refresh'),
  };
}

const count = (granted: boolean[]) => granted.filter(Boolean).length;

describe("StatusReadMeter: a network's refreshes", () => {
  it('counts the last 1,000 ms: this second, and the part of the previous one they still hold', () => {
    expect(lastSecondCount(2, 6, 0)).toBe(8);
    expect(lastSecondCount(2, 6, 500)).toBe(5);
    expect(lastSecondCount(2, 6, 999)).toBeCloseTo(2.006);
    expect(lastSecondCount(2, 6, 1_000)).toBe(2);
    // A clock read outside the second it named weighs as its nearest end.
    expect(lastSecondCount(2, 6, -5)).toBe(8);
    expect(lastSecondCount(2, 6, 1_200)).toBe(2);
  });

  it(`takes at most ${cap} a window across its addresses and owners; rebuilds and other networks are not held`, async () => {
    const now = { t: S };
    const { store, meter: m, refresh } = network(now);
    const granted: boolean[] = [];
    // Spread so that the last second never holds more than its share.
    for (const [at, n] of [
      [0, perSecond],
      [1_999, perSecond - 1],
      [2_000, cap - 2 * perSecond + 1],
    ] as const) {
      now.t = S + at;
      for (let i = 0; i < n; i++)
        granted.push(await refresh(`203.0.113.${granted.length + 1}`, i % 2 ? `o${i}` : undefined));
    }
    expect(granted).toEqual(Array<boolean>(cap).fill(true));
    // The window's last millisecond: its last second holds 1 and 5 ms of the one before, the window 12.
    now.t = S + windowMs - 1;
    expect(await refresh('203.0.113.200')).toBe(false);
    expect(await refresh('203.0.113.201', 'carol')).toBe(false);
    expect(await m.take(undefined, { request: { headers: {} }, ip: '203.0.113.202' }, 'rebuild')).toBe(true);
    expect(await refresh('203.0.114.1')).toBe(true);
    const v6: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) v6.push(await refresh(`2001:db8:1:${i}::1`));
    expect(v6).toEqual([...Array<boolean>(perSecond).fill(true), false]);
    expect(await refresh('2001:db8:2::1')).toBe(true);
    now.t += 1;
    expect(await refresh('203.0.113.204')).toBe(true);
    await store.close();
  });

  it(`takes at most ${perSecond} in any 1,000 ms, a burst at a second's end too; what the last second refused is given back to the window`, async () => {
    const now = { t: S + 999 };
    const { store, meter: m, from, refresh, options } = network(now);
    // 15 pages of 15 addresses poll at once, at a second's last millisecond.
    const burst = await Promise.all(Array.from({ length: 15 }, (_, i) => refresh(`203.0.113.${i + 1}`)));
    expect(count(burst)).toBe(perSecond);
    // The next second's first millisecond: the last 1,000 ms still hold the burst.
    now.t = S + 1_000;
    expect(await refresh('203.0.113.50')).toBe(false);
    // Known spent until the last second could take one more (1 + 6 × (1 - x) ≤ 6: 167 ms in).
    now.t = S + 1_166;
    expect(m.spent(undefined, from('203.0.113.51'), 'refresh')).toBe(true);
    expect(await refresh('203.0.113.51')).toBe(false);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.52'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.52')).toBe(true);
    // Another instance on the same store counts the same last second.
    const other = new StatusReadMeter(store, options);
    expect(await other.take(undefined, from('203.0.113.53'), 'refresh')).toBe(false);
    // Half-way through, the burst's second weighs 3: this one takes 2 more (3 in all), then knows it
    // spent until 4 + 6 × (1 - x) <= 6 (667 ms in).
    now.t = S + 1_500;
    const half: boolean[] = [];
    for (let i = 0; i < 3; i++) half.push(await refresh(`203.0.113.${54 + i}`));
    expect(half).toEqual([true, true, false]);
    now.t = S + 1_666;
    expect(m.spent(undefined, from('203.0.113.57'), 'refresh')).toBe(true);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.57'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.57')).toBe(true);
    // The window's rest: what the refused pages took was given back (6 + 4 + 2 = 12).
    now.t = S + 2_999;
    const rest: boolean[] = [];
    for (let i = 0; i < 3; i++) rest.push(await refresh(`203.0.113.${60 + i}`));
    expect(rest).toEqual([true, true, false]);
    // The window (from the burst's millisecond) refuses to its end, the last second holding room.
    now.t = S + 999 + windowMs - 1;
    expect(await refresh('203.0.113.80')).toBe(false);
    expect(m.spent(undefined, from('203.0.113.81'), 'refresh')).toBe(true);
    now.t += 1;
    expect(m.spent(undefined, from('203.0.113.82'), 'refresh')).toBe(false);
    expect(await refresh('203.0.113.82')).toBe(true);
    await store.close();
  });

  it("a read its caller's own meter refused takes nothing of its network's last second", async () => {
    const now = { t: S };
    const { store, refresh } = network(now);
    // One address past its own refreshes (6 a window), polling on in one second.
    for (let i = 0; i < perSecond; i++) expect(await refresh('198.51.100.7')).toBe(true);
    now.t = S + 2_000;
    expect(await Promise.all(Array.from({ length: 5 }, () => refresh('198.51.100.7')))).toEqual(
      Array<boolean>(5).fill(false),
    );
    // Its neighbours have the second's share, and the window's rest.
    const neighbours: boolean[] = [];
    for (let i = 0; i <= perSecond; i++) neighbours.push(await refresh(`198.51.100.${20 + i}`));
    expect(neighbours).toEqual([...Array<boolean>(perSecond).fill(true), false]);
    await store.close();
  });
});
