import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from '@jest/globals';
import { RedisStore } from '../../src/store/redis.store.js';
import { RangeStats } from '../../src/pumping/range-stats.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { SPEC_DATA_KEYS } from '../support/data-keys.js';

/**
 * Issue 45 F1 between instances: several hosts' RedisStores on one Redis (each its own connection and
 * clock reading) cast the same network's past-network vote at once, or after a host crashed holding
 * its claim (claimed, never counted). A country's `networksPast` counts the network once per UTC day.
 */
const MIDNIGHT = Date.UTC(2026, 0, 7);
const NETWORK = 'net:203.0.113.0/24';
const INSTANCES = 6;

const opened: RedisStore[] = [];
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

/** `ahead`: how far instance i's clock runs ahead of the first's (the crashed host's, crashedClaim). */
function deployment(start: number, ahead: (i: number) => number = () => 0) {
  let now = start;
  const prefix = `pv-votes-race:${randomUUID()}:`;
  const instances = Array.from({ length: INSTANCES }, (_, i) => {
    const store = new RedisStore({ url: sharedRedisUrl(), keyPrefix: prefix, clock: () => now + ahead(i) });
    opened.push(store);
    return {
      store,
      stats: new RangeStats(store, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS),
    };
  });
  const all = () => Promise.all(instances.map(({ stats }) => stats.votePastNetwork('country:RU', NETWORK)));
  const networksPast = async () =>
    (await instances[0]!.stats.read([{ id: 'country:RU', withBaseline: true }])).get('country:RU')!
      .networksPast ?? 0;
  /**
   * A host that claims the vote at `now` and crashes before its count is sent: its store's batch that
   * counts never runs and never answers. Resolves once the claim is in Redis.
   */
  const crashedClaim = async () => {
    let reached!: () => void;
    const counting = new Promise<void>((resolve) => (reached = resolve));
    const inner = instances[0]!.store;
    const crashing = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          const ops = property === 'batch' ? (args[0] as { op: string }[]).map(({ op }) => op) : [];
          if (!ops.includes('increment')) return (value as (...a: unknown[]) => unknown).apply(target, args);
          reached();
          return new Promise(() => undefined);
        };
      },
    });
    const host = new RangeStats(crashing, { windowMs: 3_600_000, recordTtlMs: 86_400_000 }, SPEC_DATA_KEYS);
    void host.votePastNetwork('country:RU', NETWORK);
    await counting;
  };
  return { all, networksPast, crashedClaim, at: (t: number) => void (now = t) };
}

describe('past-network votes cast by several instances on one Redis', () => {
  it('six instances casting one network’s vote at once count it once, and again at once still once', async () => {
    const d = deployment(MIDNIGHT + 3_600_000);
    await d.all();
    await d.all();
    expect(await d.networksPast()).toBe(1);
  });

  it('a claim held by a crashed host: nothing counted at 59,999 ms, counted once at 60,000 ms by six instances at once', async () => {
    const d = deployment(MIDNIGHT + 3_600_000);
    await d.crashedClaim();
    d.at(MIDNIGHT + 3_600_000 + 59_999);
    await d.all();
    expect(await d.networksPast()).toBe(0);
    d.at(MIDNIGHT + 3_600_000 + 60_000);
    await d.all();
    await d.all();
    expect(await d.networksPast()).toBe(1);
  });

  it('clocks 0 to 5 s apart: a crashed claim lapses first for the clock furthest ahead, and the vote is counted once', async () => {
    const t = MIDNIGHT + 3_600_000;
    const d = deployment(t, (i) => i * 1_000);
    await d.crashedClaim();
    d.at(t + 54_999);
    await d.all();
    expect(await d.networksPast()).toBe(0);
    // The last instance's clock reads the claim's minute out; the others' do not: all cast at once.
    d.at(t + 55_000);
    await d.all();
    expect(await d.networksPast()).toBe(1);
    d.at(t + 60_000);
    await d.all();
    expect(await d.networksPast()).toBe(1);
  });

  it('a claim crashed at 23:59:59.999: at 00:00:00.000 the new day’s vote is cast once, yesterday’s none', async () => {
    const d = deployment(MIDNIGHT - 1);
    await d.crashedClaim();
    d.at(MIDNIGHT);
    await d.all();
    await d.all();
    // Today's count (1) and yesterday's (0): the country reads the larger.
    expect(await d.networksPast()).toBe(1);
    d.at(MIDNIGHT + 86_400_000);
    // Only yesterday (the day of MIDNIGHT) is read now: one network, counted once.
    expect(await d.networksPast()).toBe(1);
  });
});
