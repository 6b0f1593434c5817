import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { PAST_NETWORKS_FLAG } from '../../src/pumping/giver-shares.js';
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

  it("default protection: a new start makes thirteen besides the pumping defence's calls and the method figures' claims, the reads before paying the wrong-code budget and the store probe; its duplicate is handed back without a write", async () => {
    const { store, calls } = countingStore();
    fx.host = await protectedHost(fx.sb, platform, {}, { store });
    const phone = freshPhone();
    const ip = freshIp();
    calls.length = 0;
    const first = await startFrom(fx.host, ip, phone);
    expect(first.status).toBe(201);
    // The method figures are counted after the answer; their reads wait for it.
    await fx.host.app.get(MethodStats).flush();
    // The pumping defence's calls go with the others' (one hop each on Redis, which pipelines them).
    // Its gets, 45 + 2 + 2, with the coalescing claim: its reading (counts of the range, the prefix, the
    // country and the client, the range's and prefix's burst counts, their holds, the number's own
    // starts, the prefix's and country's day: starts, numbers and ranges verified; the country's week:
    // starts and numbers verified, and its starts of the last minutes), the country's networks past
    // their share (the vote slots of today and yesterday: 2 × PAST_NETWORKS_FLAG), and the givers' week balances (the address and its /24). A start
    // past a share reads the country's two twins in one more round trip; this one is within.
    // With the request limits, the number's hint in the window (a setIfAbsent: its range's and its
    // prefix's) and 2 gets, the caller's marks in the range and the prefix. Its increments, 11 + 2 * 4 + 2,
    // with the spend reservation: its counts of the start (the subjects' windows, the number's, the
    // prefix's and country's day, the country's week and last minutes) with the caller's marks (2
    // setIfAbsents) and burst counts where the caller was not marked; the window, day, week and last
    // minutes of each of the country's two twins; the two givers' balances. Its set, 1, after the API:
    // which subjects the session belongs to.
    const pumping = calls.filter((c) => c.endsWith('(protect:pump)'));
    expect(pumping.filter((c) => c.startsWith('get(')).length).toBe(45 + 2 * PAST_NETWORKS_FLAG + 2 + 2);
    expect(pumping.filter((c) => c.startsWith('setIfAbsent(')).length).toBe(3);
    expect(pumping.filter((c) => c.startsWith('increment(')).length).toBe(11 + 2 * 4 + 2);
    expect(pumping.filter((c) => c.startsWith('set(')).length).toBe(1);
    expect(pumping.length).toBe(76 + 2 * (PAST_NETWORKS_FLAG - 1));
    expect(calls.filter((c) => !c.endsWith('(protect:pump)') && c !== FLUSHED)).toEqual([
      // The wrong-code budget and the API's 429 back-off, read with the defence's counts and the
      // coalescing claim (one hop).
      'get(protect:wrong-codes-phone)',
      'get(protect:api-backoff)',
      'setIfAbsent(protect:coalesce)',
      // The cooldown and the request limits, taken together with the defence's marks (one hop).
      'setIfAbsent(protect:cooldown)',
      'increment(protect:start-client)',
      'increment(protect:start-phone-caller)',
      'increment(protect:start-phone)',
      // The store probe, which reserves the session's erasure index slot (under its number, and its
      // owner when there is one), with the defence's counts and the spend reservation (one hop); the
      // reservation is live from the moment it is made (a usage read while its call is in flight
      // gives none of it back). The number's erasure mark is read first: an erasure that takes the index
      // after the slot is claimed and before the record marks it after, and the record's batch sees it.
      // The day's first session of the number claims its slot 0 (a later one takes the day's counter).
      'get(subject)',
      'setIfAbsent(subject)',
      'increment(protect:spend)',
      // The registration's own count of the cap (registrations sharing a store pool the cap; each reconciles
      // what it counted with its own account's usage).
      'increment(protect:spend-own)',
      'increment(protect:spend-live)',
      // After the API, one hop, in this order: the record written with its erasure mark read (an
      // erasure that found the index first removes it), then the index slot reserved (a slot found
      // names a stored record); then the spend reservation stays open until the session ends (charged
      // on delivery: issue 29), and the coalescing claim turns into the session, over its own claim only (its price
      // as reserved: the window's live count unchanged).
      'set(session)',
      'get(erased)',
      'set(subject)',
      // The number's erasure mark read again: changed since the slot was reserved, the start removes itself.
      'get(subject)',
      'set(protect:spend-open)',
      'replaceIfEquals(protect:coalesce)',
      // The method figures, after the answer: the session's start claimed (its counters are added
      // within a second, in a batch: here by the flush).
      ...METHOD_FIGURES_OF_A_START,
    ]);
    expectFlushed(calls);

    calls.length = 0;
    const again = await startFrom(fx.host, ip, phone, 'sms', cookieFrom(first));
    expect({ status: again.status, resumed: again.body.resumed }).toEqual({ status: 201, resumed: true });
    expect(calls.filter((c) => !c.startsWith('get(') && !c.startsWith('setIfAbsent('))).toEqual([]);
    await store.close();
  });

  it('protection off: the start probes the store once before the paid call (its index slot reserved), then records and indexes the session', async () => {
    const { store, calls } = countingStore();
    fx.host = await protectedHost(fx.sb, platform, { enabled: false }, { store });
    calls.length = 0;
    const posts = fx.sb.requestCount('POST /v1/verify');
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    await fx.host.app.get(MethodStats).flush();
    expect(calls.filter((c) => c !== FLUSHED)).toEqual([
      'get(subject)',
      'setIfAbsent(subject)',
      'set(session)',
      'get(erased)',
      'set(subject)',
      'get(subject)',
      ...METHOD_FIGURES_OF_A_START,
    ]);
    expectFlushed(calls);
    expect(fx.sb.requestCount('POST /v1/verify') - posts).toBe(1);
    await store.close();
  });
});

/** An SMS start's method figures: the claim; the counts wait for the instance's next batch (MethodStats.flush). */
/**
 * The method figures of a start: whether it is its number's first with the method today (read, claim,
 * remember: the remembered admission is its start's claim), and its caller's first of the day claimed (issue 29).
 */
const METHOD_FIGURES_OF_A_START = [
  // The method's health on the number's prefix, which this instance never read: the deployment's kept change (a
  // start while the method is unhealthy there does not teach the choice's cells, on whichever instance).
  'get(stats-health)',
  'get(stats-admitted)',
  'setIfAbsent(stats-number)',
  // One round: the caller's, address's and network's day shares, and whether the caller has a record (issue 47).
  'increment(stats-giver)',
  'increment(stats-giver)',
  'increment(stats-giver)',
  'get(stats-record)',
  // In the same round, the network's week share of the three choice cells and of the moment's `7~*` (issue 47),
  // this week's counted and the previous week's read (the last 7 days'), and its window's claim of the two
  // health cells.
  ...Array.from({ length: 4 }, () => ['increment(stats-cell-net)', 'get(stats-cell-net)']).flat(),
  'setIfAbsent(stats-cell-net)',
  'setIfAbsent(stats-cell-net)',
  // The admission, written once: it is the start's count claim too.
  'setIfAbsent(stats-admitted)',
  'setIfAbsent(stats-caller)',
];

const FLUSHED = 'increment(stats)';
/**
 * The flush's counters of an SMS start (started, by country and in all, with its caller): four, after the
 * answer, off the start's path. The instance's one-second timer may flush part of them before the test's
 * flush on a loaded machine, each part a batch of its own: at least four, never none.
 */
function expectFlushed(calls: string[]): void {
  expect(calls.filter((c) => c === FLUSHED).length).toBeGreaterThanOrEqual(4);
}

/** The store operations that are a round trip on Redis (all but the clock and close; the reconciler is off in these hosts). */
// `replaceIfEquals` is optional in a host's store (the module then reads and writes), one hop in the module's own.
const ROUND_TRIPS = new Set<string | symbol>([
  ...STORE_METHODS.filter((m) => m !== 'now' && m !== 'close'),
  'replaceIfEquals',
]);

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
