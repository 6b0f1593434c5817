import { describe, expect, it } from '@jest/globals';
import { STORE_METHODS } from '../../src/store/create-store.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { ONE_PLATFORM } from '../support/verification-app.js';
import {
  cookieFrom,
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from './protection-host.js';

/**
 * What a start costs in store round trips (each one a network hop with Redis): a new start with
 * the default protections makes only the writes it needs, and probes the store once before paying
 * (a session that could not be recorded would never be followed).
 */
describe.each(ONE_PLATFORM)('store round trips of a start (%s)', (platform) => {
  const fx = protectionFixture();

  /** A MemoryStore that records each operation as `name(key kind)`. */
  function countingStore(): { store: VerificationStore; calls: string[] } {
    const inner = new MemoryStore({ clock: () => fx.sb.now() });
    const calls: string[] = [];
    const store = new Proxy(inner, {
      get(target, property, receiver) {
        const value = Reflect.get(target, property, receiver) as unknown;
        if (typeof value !== 'function' || !ROUND_TRIPS.has(property)) return value;
        return (...args: unknown[]) => {
          calls.push(`${String(property)}(${kindOf(String(args[0]))})`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    return { store, calls };
  }

  it("default protection: a new start makes thirteen besides the pumping defence's four batches and the method figures' claims, the reads before paying the wrong-code budget and the store probe; its duplicate is handed back without a write", async () => {
    const { store, calls } = countingStore();
    fx.host = await protectedHost(fx.sb, platform, {}, { store });
    const phone = freshPhone();
    const ip = freshIp();
    calls.length = 0;
    const first = await startFrom(fx.host, ip, phone);
    expect(first.status).toBe(201);
    // The pumping defence's calls go in four batches of concurrent calls (one hop each on Redis,
    // which pipelines them): its reading (counts of the range, the prefix, the country and the
    // client, the range's and prefix's burst counts, their holds, the number's own starts, the
    // prefix's and country's day: starts, numbers and ranges verified; the country's week: starts and
    // numbers verified, its starts of the last minutes and its networks past their share (today,
    // yesterday); the givers' week balances, 2: the address and
    // its /24; a start past a share reads the country's two twins in one more batch), its counts of the
    // start (the prefix's and country's day, the country's and its two twins' week and last minutes too,
    // the givers' balances) with the number's and the caller's marks in the range and the prefix, the
    // burst counts of a new number from a new caller, and which subjects the session belongs to.
    const pumping = calls.filter((c) => c.endsWith('(protect:pump)'));
    expect(pumping.filter((c) => c.startsWith('get(')).length).toBe(45 + 2 + 2);
    expect(pumping.filter((c) => c.startsWith('setIfAbsent(')).length).toBe(4);
    expect(pumping.filter((c) => c.startsWith('increment(')).length).toBe(11 + 2 * 4 + 2);
    expect(pumping.filter((c) => c.startsWith('set(')).length).toBe(1);
    expect(pumping.length).toBe(75);
    expect(calls.filter((c) => !c.endsWith('(protect:pump)'))).toEqual([
      'setIfAbsent(protect:coalesce)',
      // The wrong-code budget and the API's 429 back-off, read with the defence's counts (one hop).
      'get(protect:wrong-codes-phone)',
      'get(protect:api-backoff)',
      'setIfAbsent(protect:cooldown)',
      'increment(protect:start-client)',
      'increment(protect:start-phone-caller)',
      'increment(protect:start-phone)',
      // The reservation, live from the moment it is made (a usage read while its call is in flight
      // gives none of it back), in the same batch.
      'increment(protect:spend)',
      'increment(protect:spend-live)',
      'get(session)',
      // The record written with its erasure mark read (an erasure that found the index first removes
      // it), and the erasure index: the session under its number (and owner, when there is one).
      'set(session)',
      'get(erased)',
      'increment(subject)',
      'set(subject)',
      // The spend reservation stays open until the session ends (charged on delivery: issue 29),
      // written with the coalescing claim's hand-back (one round trip; its price as reserved: the
      // window's live count unchanged).
      'set(protect:spend-open)',
      'set(protect:coalesce)',
      // The method figures: the session's start claimed (its counters are added within a second, in a batch).
      ...METHOD_FIGURES_OF_A_START,
    ]);

    calls.length = 0;
    const again = await startFrom(fx.host, ip, phone, 'sms', cookieFrom(first));
    expect({ status: again.status, resumed: again.body.resumed }).toEqual({ status: 201, resumed: true });
    expect(calls.filter((c) => !c.startsWith('get(') && !c.startsWith('setIfAbsent('))).toEqual([]);
    await store.close();
  });

  it('protection off: the start probes the store once before the paid call, then records and counts the session', async () => {
    const { store, calls } = countingStore();
    fx.host = await protectedHost(fx.sb, platform, { enabled: false }, { store });
    calls.length = 0;
    const posts = fx.sb.requestCount('POST /v1/verify');
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(calls).toEqual([
      'get(session)',
      'set(session)',
      'get(erased)',
      'increment(subject)',
      'set(subject)',
      ...METHOD_FIGURES_OF_A_START,
    ]);
    expect(fx.sb.requestCount('POST /v1/verify') - posts).toBe(1);
    await store.close();
  });
});

/** An SMS start's method figures: the claim; the counts wait for the instance's next batch (MethodStats.flush). */
/**
 * The method figures of a start: whether it is its number's first with the method today (read, claim,
 * remember), its start claimed, and its caller's first of the day claimed (issue 29).
 */
const METHOD_FIGURES_OF_A_START = [
  'get(stats-admitted)',
  'setIfAbsent(stats-number)',
  // One round: the caller's, address's and network's day shares, and whether the caller has a record (issue 47).
  'increment(stats-giver)',
  'increment(stats-giver)',
  'increment(stats-giver)',
  'get(stats-record)',
  'set(stats-admitted)',
  'setIfAbsent(stats-counted)',
  'setIfAbsent(stats-caller)',
];

/** The store operations that are a round trip on Redis (all but the clock and close; the reconciler is off in these hosts). */
const ROUND_TRIPS = new Set<string | symbol>(STORE_METHODS.filter((m) => m !== 'now' && m !== 'close'));

/**
 * `protect:cooldown:<digest>` → `protect:cooldown`, `session:{id}` → `session`, `stats:<day>:…` →
 * `stats`; queue names as they are.
 */
function kindOf(key: string): string {
  return key
    .replace(/:\{.*$/, '')
    .replace(/^(protect:[a-z-]+):.*$/, '$1')
    .replace(/^stats:.*$/, 'stats');
}
