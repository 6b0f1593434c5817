/**
 * Issue 43: one giver adds a bounded amount to what others are judged by. The rule (pure) and the
 * store's counts under it, over any split of one network's starts among its addresses and a host's
 * keys (fast-check): n givers of one network add no more than one network's bound.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { MemoryStore } from '../store/memory.store.js';
import { RedisStore } from '../store/redis.store.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { sharedRedisUrl } from '../../test/support/redis-server.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { roundTripStore } from '../../test/support/round-trip-store.js';
import {
  chargedGivers,
  GIVER_SHARES,
  giveBackOf,
  givenBack,
  giversOf,
  nextStanding,
  START_WEIGHT,
  standingOf,
  type Giver,
  type Standing,
} from './giver-shares.js';
import { RangeStats } from './range-stats.js';
import { FINE, VOLUME } from './range-stats-keys.js';

const PRIOR = 0.8;
const attempt = (ip: string, clientKey?: string, owner?: string) => ({
  phoneNumber: '+79161230001',
  owner,
  clientKey: clientKey ?? ip,
  ip,
});

describe('giver shares: the rule', () => {
  it('the givers of a start: its key, its address when the key is not it, its network (/24, /48), its owner', () => {
    expect(giversOf(attempt('192.0.2.9'), 64)).toStrictEqual([
      { id: 'client:192.0.2.9', share: GIVER_SHARES.client, network: false },
      { id: 'net:192.0.2.0/24', share: GIVER_SHARES.network, network: true },
    ]);
    expect(giversOf(attempt('2001:db8:77:5::1', 'acct:1', 'u1'), 64).map((g) => g.id)).toStrictEqual([
      'client:acct:1',
      'address:2001:db8:77:5::/64',
      'net:2001:db8:77::/48',
      'owner:u1',
    ]);
    expect(giversOf({ ...attempt('x'), ip: undefined, clientKey: undefined }, 64)).toStrictEqual([]);
  });

  it('a start stands within while every balance with it stays at its share, past a network at one more, past at a caller’s one more', () => {
    const givers = giversOf(attempt('2001:db8:77:5::1', 'acct:1'), 64);
    const at = (client: number, address: number, net: number) =>
      standingOf(
        givers,
        [client, address, net].map((n) => n * START_WEIGHT),
      );
    expect(at(5, 5, 9)).toBe('within');
    expect(at(5, 5, 9.01)).toBe('network');
    expect(at(5.01, 5, 9)).toBe('past');
    expect(at(5, 5.01, 10)).toBe('past');
    // The next start's standing is read from the balances before it.
    expect(
      nextStanding(
        givers,
        [4, 4, 8].map((n) => n * START_WEIGHT),
      ),
    ).toBe('within');
    expect(
      nextStanding(
        givers,
        [4, 4, 8.01].map((n) => n * START_WEIGHT),
      ),
    ).toBe('network');
    expect(
      nextStanding(
        givers,
        [4.01, 4, 8].map((n) => n * START_WEIGHT),
      ),
    ).toBe('past');
    expect(chargedGivers(givers, 'within')).toStrictEqual(givers);
    expect(chargedGivers(givers, 'network').map((g) => g.id)).toStrictEqual([
      'client:acct:1',
      'address:2001:db8:77:5::/64',
    ]);
    expect(chargedGivers(givers, 'past')).toStrictEqual([]);
    // No giver at all (a switch): within.
    expect(standingOf([], [])).toBe('within');
  });

  it('a start with a key and no address known has the key and its owner as givers, no address or network', () => {
    const noAddress = { ...attempt('x', 'acct:1', 'u1'), ip: undefined };
    expect(giversOf(noAddress, 64).map((g) => g.id)).toStrictEqual(['client:acct:1', 'owner:u1']);
  });

  it('a verification gives back to the givers its start was charged to, one start over the prior each', () => {
    const givers = giversOf(attempt('2001:db8:77:5::1', 'acct:1', 'u1'), 64);
    expect(giveBackOf(givers, 'within', PRIOR)).toStrictEqual({
      givers: ['client:acct:1', 'address:2001:db8:77:5::/64', 'net:2001:db8:77::/48', 'owner:u1'],
      amount: 125,
    });
    expect(giveBackOf(givers, 'network', 0.5)).toStrictEqual({
      givers: ['client:acct:1', 'address:2001:db8:77:5::/64', 'owner:u1'],
      amount: 200,
    });
    expect(giveBackOf(givers, 'past', PRIOR)).toStrictEqual({ givers: [], amount: 125 });
  });

  it('a verification gives back one start over the prior: users who complete as expected keep their balance', () => {
    expect(givenBack(0.8)).toBe(125);
    expect(givenBack(1)).toBe(100);
    expect(givenBack(0)).toBe(2000);
  });

  /**
   * A model of the store under the rule: starts of one network's addresses (and keys), some
   * verified later; what the country and its callers-bounded twin count.
   */
  function play(actions: { address: number; key: number; verified: boolean }[], keyed: boolean) {
    const balances = new Map<string, number>();
    const country = { starts: 0, verified: 0 };
    const fine = new Map<string, { starts: number; verified: number }>();
    const pending: { charged: Giver[]; within: boolean; fine: boolean; address: string }[] = [];
    for (const a of actions) {
      const ip = `198.51.100.${a.address + 1}`;
      const givers = giversOf(attempt(ip, keyed ? `acct:${a.address}:${a.key}` : undefined), 64);
      const after = givers.map((g) => (balances.get(g.id) ?? 0) + START_WEIGHT);
      const standing = standingOf(givers, after);
      const charged = chargedGivers(givers, standing);
      for (const g of charged) balances.set(g.id, (balances.get(g.id) ?? 0) + START_WEIGHT);
      if (standing === 'within') country.starts += 1;
      const f = fine.get(ip) ?? { starts: 0, verified: 0 };
      if (standing !== 'past') f.starts += 1;
      fine.set(ip, f);
      if (a.verified)
        pending.push({ charged, within: standing === 'within', fine: standing !== 'past', address: ip });
      // Verifications arrive later, one at a time.
      if (pending.length > 2 || a === actions.at(-1))
        for (const p of pending.splice(0)) {
          for (const g of p.charged) balances.set(g.id, balances.get(g.id)! - givenBack(PRIOR));
          if (p.within) country.verified += 1;
          if (p.fine) fine.get(p.address)!.verified += 1;
        }
    }
    return { country, fine };
  }

  const actions = fc.array(fc.record({ address: fc.nat(11), key: fc.nat(5), verified: fc.boolean() }), {
    maxLength: 200,
  });
  const shortfall = (c: { starts: number; verified: number }) => PRIOR * c.starts - c.verified;

  it('n addresses (and keys) of one network add to its country no more than one network’s share, at any split', () => {
    fc.assert(
      fc.property(actions, fc.boolean(), (list, keyed) => {
        const { country, fine } = play(list, keyed);
        // Shortfall from the prior: at most the network's share of it, whatever was verified.
        expect(shortfall(country)).toBeLessThanOrEqual(PRIOR * GIVER_SHARES.network + 1e-9);
        // Nothing verified: at most the share in unconverted starts.
        if (list.every((a) => !a.verified)) expect(country.starts).toBeLessThanOrEqual(GIVER_SHARES.network);
        // Each address's keys together add to the callers-bounded twin no more than one address's share.
        for (const f of fine.values())
          expect(shortfall(f)).toBeLessThanOrEqual(PRIOR * GIVER_SHARES.address + 1e-9);
      }),
      { numRuns: 300 },
    );
  });
});

const NOON = () => Date.UTC(2026, 0, 6, 12);
const STORES: [string, () => VerificationStore][] = [
  ['MemoryStore', () => new MemoryStore({ clock: NOON })],
  [
    'RedisStore',
    () => new RedisStore({ url: sharedRedisUrl(), clock: NOON, keyPrefix: `giver-shares:${randomUUID()}:` }),
  ],
];

describe.each(STORES)('giver shares: the store’s counts (RangeStats on %s)', (_name, makeStore) => {
  const stores: VerificationStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });
  const stats = () => {
    const store = makeStore();
    stores.push(store);
    return new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
  };
  const place = (n: number) => [
    { id: `range:+7916${String(n).padStart(3, '0')}` },
    { id: 'prefix:+7916' },
    { id: 'country:RU' },
    { id: `country:RU${FINE}` },
    { id: `country:RU${VOLUME}` },
  ];

  // A start counts what the standing its balances showed when read keeps (`expected`); starts counted
  // concurrently can make that any standing, so the counts must not depend on it.
  it('n addresses of one network, any split, nothing verified, any expected standing: the country and its prefix count at most the network’s share; the volume every start', async () => {
    const expectation = fc.constantFrom('read', 'within', 'network', 'past') as fc.Arbitrary<
      'read' | Standing
    >;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ address: fc.nat(7), key: fc.nat(3), expected: expectation }), {
          minLength: 1,
          maxLength: 60,
        }),
        fc.boolean(),
        async (list, keyed) => {
          const rs = stats();
          for (const [i, a] of list.entries()) {
            const ip = `203.0.113.${a.address + 1}`;
            const att = attempt(ip, keyed ? `acct:${a.address}:${a.key}` : undefined);
            const givers = giversOf(att, 64);
            const expected =
              a.expected === 'read' ? nextStanding(givers, await rs.readShares(givers)) : a.expected;
            const before = await rs.read(place(i));
            const counted = await rs.countStart(
              place(i),
              undefined,
              `client:${att.clientKey}`,
              givers,
              undefined,
              expected,
            );
            // What each subject's window held before the start, whatever it kept of it.
            for (const [id, c] of before) expect(counted.before.get(id)).toBe(c.current);
          }
          const counts = await rs.read(place(0));
          // The rule folded over the starts in order: a start within every share counts in the country
          // and its prefix, one past its network's only in the twin; an address past its own share (a
          // caller's) in neither, so one address's sixth start is not the country's.
          const perAddress = new Map<number, number>();
          for (const a of list) perAddress.set(a.address, (perAddress.get(a.address) ?? 0) + 1);
          const fineBound = [...perAddress.values()].reduce(
            (sum, n) => sum + Math.min(n, GIVER_SHARES.address),
            0,
          );
          const withinBound = Math.min(fineBound, GIVER_SHARES.network);
          expect(counts.get('country:RU')!.starts).toBe(withinBound);
          expect(counts.get('prefix:+7916')!.starts).toBe(withinBound);
          expect(counts.get('country:RU')!.week!.starts).toBe(withinBound);
          expect(counts.get(`country:RU${FINE}`)!.starts).toBe(fineBound);
          expect(counts.get(`country:RU${VOLUME}`)!.starts).toBe(list.length);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('a start past a share is charged to no giver past it, a release gives back what was charged, a verification what was remembered', async () => {
    const rs = stats();
    const ip = (a: number) => `203.0.113.${a}`;
    const givers = (a: number) => giversOf(attempt(ip(a)), 64);
    // One address spends its own share and stops there: its network keeps the rest for its neighbours.
    for (let i = 0; i < 8; i++) await rs.countStart(place(i), undefined, `client:${ip(1)}`, givers(1));
    expect(await rs.readShares(givers(1))).toStrictEqual([5 * START_WEIGHT, 5 * START_WEIGHT]);
    for (let a = 2; a <= 5; a++) await rs.countStart(place(a), undefined, `client:${ip(a)}`, givers(a));
    expect((await rs.readShares(givers(2)))[1]).toBe(9 * START_WEIGHT);
    // Past the network's share: charged to its address only; released, to nobody.
    const past = await rs.countStart(place(9), undefined, `client:${ip(6)}`, givers(6));
    expect(past.standing).toBe('network');
    expect(await rs.readShares(givers(6))).toStrictEqual([START_WEIGHT, 9 * START_WEIGHT]);
    await past.release();
    expect(await rs.readShares(givers(6))).toStrictEqual([0, 9 * START_WEIGHT]);
    // A verification remembered for the network and address gives one start over the prior back.
    await rs.rememberSession('req-1', ['country:RU'], 60_000, {
      givers: givers(2).map((g) => g.id),
      amount: givenBack(PRIOR),
    });
    expect(await rs.takeSession('req-1', '+79161234567')).toStrictEqual(['country:RU']);
    expect(await rs.takeSession('req-1', '+79161234567')).toBeUndefined();
    expect(await rs.readShares(givers(2))).toStrictEqual([
      START_WEIGHT - givenBack(PRIOR),
      9 * START_WEIGHT - givenBack(PRIOR),
    ]);
    // The network has room again: a neighbour's next start is within.
    expect((await rs.countStart(place(10), undefined, `client:${ip(7)}`, givers(7))).standing).toBe('within');
    // The same number verified again this week gives its givers nothing more.
    const balances = await rs.readShares(givers(2));
    await rs.rememberSession('req-3', ['country:RU'], 60_000, {
      givers: givers(2).map((g) => g.id),
      amount: givenBack(PRIOR),
    });
    expect(await rs.takeSession('req-3', '+79161234567')).toStrictEqual(['country:RU']);
    expect(await rs.readShares(givers(2))).toStrictEqual(balances);
    // A session remembered by an older version (a bare list) gives nothing back.
    await rs.rememberSession('req-2', ['country:RU'], 60_000);
    expect(await rs.takeSession('req-2', '+79161234567')).toStrictEqual(['country:RU']);
  });

  it('networks past their share vote once each per day in the store: the third is read as three; an address past its own share is no vote', async () => {
    const rs = stats();
    let i = 0;
    const sweep = async (net: string, n: number) => {
      for (let a = 0; a < n; a++) {
        const att = attempt(`${net}.${a + 1}`);
        await rs.countStart(place((i += 1)), undefined, `client:${att.clientKey}`, giversOf(att, 64));
      }
    };
    const votes = async () => (await rs.read(place(0))).get('country:RU')!.networksPast;
    // One address, 30 starts under 6 keys: past its caller's share, never its network's.
    for (let k = 0; k < 30; k++) {
      const att = attempt('192.0.2.7', `acct:${k % 6}`);
      await rs.countStart(place((i += 1)), undefined, `client:${att.clientKey}`, giversOf(att, 64));
    }
    expect(await votes()).toBe(0);
    await sweep('203.0.113', 9);
    expect(await votes()).toBe(0);
    await sweep('203.0.113', 20);
    expect(await votes()).toBe(1);
    await sweep('198.51.100', 10);
    expect(await votes()).toBe(2);
    await sweep('100.64.0', 10);
    expect(await votes()).toBe(3);
  });
});

describe('giver shares: store round trips of a network past its share', () => {
  it('its vote is asked for once a day on an instance: the later starts past the share wait as a start within does', async () => {
    const rt = roundTripStore({ clock: NOON });
    const rs = new RangeStats(rt.store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
    const place = [{ id: 'range:+7916123' }, { id: 'country:RU' }];
    const other = new RangeStats(rt.store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
    const tripsOf = async (ip: string, on = rs): Promise<number> => {
      const att = attempt(ip);
      const givers = giversOf(att, 64);
      const expected = nextStanding(givers, await rs.readShares(givers));
      rt.reset();
      await on.countStart(place, undefined, `client:${att.clientKey}`, givers, undefined, expected);
      return rt.trips.length;
    };
    const within = await tripsOf('198.51.100.1');
    const trips: number[] = [];
    for (let a = 1; a <= 12; a++) trips.push(await tripsOf(`203.0.113.${a}`));
    // The 10th passes the network's share and votes (its claim, then the count with the vote): 2 more.
    expect(trips).toStrictEqual([...Array<number>(9).fill(within), within + 2, within, within]);
    // Another instance finds the vote cast (1 more, once).
    expect([await tripsOf('203.0.113.13', other), await tripsOf('203.0.113.14', other)]).toStrictEqual([
      within + 1,
      within,
    ]);
    await rt.inner.close();
  });
});
