import { randomUUID } from 'node:crypto';
import { DAY_MS } from '../core/clock.js';
import type { DataKeys } from '../core/data-keys.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { storeBatch } from '../store/store-batch.js';
import { replaceIfEquals } from '../store/store-replace.js';
import {
  EVICTABLE,
  pumpKey,
  PUMP,
  RangeStatsKeys,
  tagOf,
  TAGGED,
  traitsOf,
  type CountedKeys,
  WEEK_MS,
} from './range-stats-keys.js';
import { PAST_NETWORKS_FLAG, START_WEIGHT, type Giver } from './giver-shares.js';

/** How many keys one instance remembers of each kind (likelyPast, votes): forgetting costs a round trip. */
const KEYS_REMEMBERED = 10_000;

/** Adds `k`, emptying the set first when it is full (a bound on memory, never on what is decided). */
function remember(set: Set<string>, k: string): void {
  if (set.has(k)) return;
  if (set.size >= KEYS_REMEMBERED) set.clear();
  set.add(k);
}

/** The keys of a country's past-network votes on a UTC day (votePastNetwork), in the order they fill. */
export function voteSlots(tag: string, day: number): string[] {
  const slots: string[] = [];
  for (let i = 0; i < PAST_NETWORKS_FLAG; i++) slots.push(pumpKey(PUMP.pastNetwork, tag, day, i));
  return slots;
}

/**
 * A counter's value; 0 for none or a value that is not a count. `least`: the least it reads as (a
 * window's count taken back below 0 reads 0).
 */
export function countOf(value: string | null, least = -Infinity): number {
  const n = Number(value);
  return Number.isFinite(n) ? Math.max(least, n) : 0;
}

/** A subject or giver, whose counters its id names (RangeHolds.tag). */
export interface Tagged {
  readonly id: string;
}

/** A running hold: when it ends and how many holds came before it in a row. */
export interface HoldState {
  until: number;
  level: number;
}

/**
 * The pumping defence's holds in the store, shared by every instance: when each subject's hold ends
 * and how many came before it in a row; which subjects a started session belongs to, and what its
 * verification gives back to its givers' balances (giver-shares.ts). RangeStats adds the counts.
 */
export class RangeHolds {
  /** Balance keys seen with no room for another start (likelyPast; bounded, cleared all at once when full). */
  readonly #full = new Set<string>();
  /** Past-network votes this instance saw cast (votePastNetwork; bounded alike). */
  readonly #voted = new Set<string>();
  /** Tags taken of the subjects and givers of starts in progress (tag): forgotten with them. */
  readonly #tags = new WeakMap<Tagged, string>();

  constructor(
    protected readonly store: VerificationStore,
    protected readonly settings: { windowMs: number; recordTtlMs: number },
    /** Names subjects, numbers and callers in keys, and seals a session's subjects. */
    protected readonly keys: DataKeys,
  ) {}

  /** Each subject's hold (undefined: none), read at once, by id in the order given. */
  async readHolds(subjects: readonly Tagged[]): Promise<Map<string, HoldState | undefined>> {
    const reads: Promise<string | null>[] = [];
    for (const s of subjects) reads.push(this.store.get(pumpKey(PUMP.hold, this.tag(s))));
    const values = await Promise.all(reads);
    const holds = new Map<string, HoldState | undefined>();
    for (const [i, s] of subjects.entries()) {
      const [until, level] = values[i]?.split(':').map(Number) ?? [];
      const valid = Number.isFinite(until) && Number.isFinite(level);
      holds.set(s.id, valid ? { until: until!, level: level! } : undefined);
    }
    return holds;
  }

  /**
   * Starts a hold of `coolOffMs` at `level`, unless another request (or instance) started one since
   * `previous` was read. True when this call started it (it then reports it, once): over `previous` only
   * while it is there (atomic: two starts that read one hold start one), else where its record expired.
   */
  async startHold(
    id: string,
    previous: HoldState | undefined,
    level: number,
    coolOffMs: number,
  ): Promise<boolean> {
    const k = pumpKey(PUMP.hold, this.keys.digest(id));
    const value = `${this.store.now() + coolOffMs}:${level}`;
    // Remembered two windows past the cool-off (`previous`'s too: `end`), so a pattern that goes on gets a longer one.
    const ttl = coolOffMs + 2 * this.settings.windowMs;
    const options = traitsOf(id).options;
    if (previous === undefined) return this.store.setIfAbsent(k, value, ttl, options);
    const was = `${previous.until}:${previous.level}`;
    const end = previous.until + 2 * this.settings.windowMs;
    if (await replaceIfEquals(this.store, k, was, value, ttl, end, options)) return true;
    return this.store.setIfAbsent(k, value, ttl, options);
  }

  /**
   * A network past its share started (or tried to: a start steered away is counted nowhere else) in
   * the country today: one vote per distinct network and UTC day (giver-shares.ts, PAST_NETWORKS_FLAG).
   * A day, not the window: a pool sweeping its networks one after another (hours each) has one or
   * two past their share in any hour.
   *
   * A vote is the network's digest in the first free of the day's PAST_NETWORKS_FLAG slots, each a key
   * written once (set-if-absent): one key per write, so a vote is counted or not, never half (a count
   * and a mark on two Redis Cluster nodes could part), and an answer lost once written reads counted.
   * Every voter walks the slots in order and reads the one it lost, so one network fills one slot.
   * Past the last slot the country is flagged whatever more networks come: nothing more is counted.
   */
  async votePastNetwork(countryId: string, network: string): Promise<void> {
    const day = Math.floor(this.store.now() / DAY_MS);
    const tag = this.keys.digest(countryId);
    const mine = this.keys.digest(`${countryId}\n${network}`);
    const memo = `${tag}:${day}:${mine}`;
    // Once this instance has seen the day's vote counted, the next start past that share asks nothing more.
    if (this.#voted.has(memo)) return;
    const slots = voteSlots(tag, day);
    const held = await storeBatch(
      this.store,
      slots.map((slot) => ({ op: 'get', key: slot })),
    );
    for (const [i, slot] of slots.entries()) {
      let holder = held[i];
      if (holder === null) {
        // Not evictable: a vote evicted from a full store would be cast, and counted, again.
        const [won, now] = await storeBatch(this.store, [
          { op: 'setIfAbsent', key: slot, value: mine, ttlMs: 2 * DAY_MS },
          { op: 'get', key: slot },
        ]);
        holder = won ? mine : now;
      }
      if (holder === mine) break;
    }
    // Counted here or before, or every slot taken by others (the country is flagged already).
    remember(this.#voted, memo);
  }

  /** The keys of the givers' balances this week (giver-shares.ts), in the order given. */
  shareKeys(givers: readonly Giver[]): string[] {
    const week = Math.floor(this.store.now() / WEEK_MS);
    const keys: string[] = [];
    for (const g of givers) keys.push(pumpKey(PUMP.share, this.tag(g), week));
    return keys;
  }

  /** Each giver's balance this week, in the order given (`shareKeys`: their keys, when known). */
  async readShares(givers: readonly Giver[], shareKeys = this.shareKeys(givers)): Promise<number[]> {
    const reads: Promise<string | null>[] = [];
    for (const k of shareKeys) reads.push(this.store.get(k));
    const balances: number[] = [];
    for (const value of await Promise.all(reads)) balances.push(countOf(value));
    return balances;
  }

  /**
   * Whether this instance last saw one of these balances with no room for another start (read or
   * counted, this week: the key names the week). A hint, never a verdict: a start so hinted reads its
   * country's twins with its other counts, not after its balances (one store round trip less).
   */
  likelyPast(shareKeys: readonly string[]): boolean {
    if (this.#full.size > 0) for (const k of shareKeys) if (this.#full.has(k)) return true;
    return false;
  }

  /** Notes which balances (with a start added) leave no room for the next start (likelyPast). */
  protected notePast(
    shareKeys: readonly string[],
    givers: readonly Giver[],
    balances: readonly number[],
  ): void {
    for (const [i, k] of shareKeys.entries())
      if (balances[i]! + START_WEIGHT <= givers[i]!.share * START_WEIGHT) this.#full.delete(k);
      else remember(this.#full, k);
  }

  /** A balance with a start added: charged (counted atomically), else read (what charging it would answer). */
  protected async balanceWithStart(shareKey: string, charge: boolean): Promise<number> {
    if (!charge) return countOf(await this.store.get(shareKey)) + START_WEIGHT;
    return (await this.store.increment(shareKey, START_WEIGHT, 2 * WEEK_MS, EVICTABLE)).value;
  }

  /**
   * The tag a subject's or giver's counters are named by: its id's keyed digest, taken once per object
   * (a start names each of its subjects in a dozen keys; they live as long as it does).
   */
  protected tag(named: Tagged): string {
    let tag = this.#tags.get(named);
    if (tag === undefined) this.#tags.set(named, (tag = this.keys.digest(named.id)));
    return tag;
  }

  /**
   * Which subjects a started session belongs to, until it can no longer be verified, and what its
   * verification gives back to the givers its start was charged to (giver-shares.ts).
   */
  async rememberSession(
    requestId: string,
    ids: string[],
    ttlMs: number,
    giveBack: { givers: string[]; amount: number } = { givers: [], amount: 0 },
  ): Promise<void> {
    // A caller (an owner, a client key, an address) is kept as its tag, all its counters need (tagOf); a
    // giver also credited as its place in the list. By position (a pending session keeps one), the ids
    // alone when nothing is given back. Sealed only when a place is kept (its range names the number).
    const kept: string[] = [];
    let named = false;
    for (const [i, id] of ids.entries()) {
      const place = (i === 0 && id.startsWith('+')) || traitsOf(id).baseline;
      kept.push(place ? id : TAGGED + this.keys.digest(id));
      if (i > 0 && place && !id.startsWith(TAGGED)) named = true;
    }
    const { amount } = giveBack;
    const givers: (string | number)[] = [];
    for (const g of giveBack.givers) {
      const tagged = TAGGED + this.keys.digest(g);
      const at = kept.indexOf(tagged);
      givers.push(at < 0 ? tagged : at);
    }
    const value = JSON.stringify(givers.length > 0 && amount > 0 ? [kept, givers, amount] : kept);
    await this.store.set(
      RangeStatsKeys.sessionKey(requestId),
      named ? this.keys.seal(value) : value,
      ttlMs,
      EVICTABLE,
    );
  }

  /**
   * The subjects of a session's start, once (later calls answer undefined); its givers get back
   * what was remembered for them, in the week it is verified, once per number and week: a number
   * verified again and again gives its givers nothing more (a network re-verifying its own SIMs
   * would otherwise stay within its share forever while every start counted in its country).
   */
  async takeSession(requestId: string, phoneNumber: string): Promise<string[] | undefined> {
    const k = RangeStatsKeys.sessionKey(requestId);
    const value = await this.store.get(k);
    if (value === null) return undefined;
    await this.store.delete(k);
    let stored: unknown;
    try {
      stored = JSON.parse(value.startsWith('[') ? value : (this.keys.open(value) ?? ''));
    } catch {
      return undefined;
    }
    // A session remembered as a bare list of ids gives nothing back; `[ids, givers, back]`, or by name (older).
    const named = (stored ?? {}) as { ids?: unknown; givers?: unknown; back?: unknown };
    const [ids, places, back]: unknown[] = Array.isArray(stored)
      ? Array.isArray(stored[0])
        ? stored
        : [stored]
      : [named.ids, named.givers, named.back];
    const strings = (x: unknown): x is string[] => Array.isArray(x) && x.every((i) => typeof i === 'string');
    if (!strings(ids)) return undefined;
    // A giver kept as its place among the ids reads as that id.
    const givers = Array.isArray(places)
      ? places.map((g: unknown) => (typeof g === 'number' ? ids[g] : g))
      : places;
    const week = Math.floor(this.store.now() / WEEK_MS);
    if (
      strings(givers) &&
      typeof back === 'number' &&
      back > 0 &&
      (await this.store.setIfAbsent(
        pumpKey(PUMP.givenBack, this.keys.digest(phoneNumber), week),
        '1',
        2 * WEEK_MS,
        EVICTABLE,
      ))
    ) {
      await Promise.all(
        givers.map((g) =>
          this.store.increment(pumpKey(PUMP.share, tagOf(this.keys, g), week), -back, 2 * WEEK_MS, EVICTABLE),
        ),
      );
    }
    return ids;
  }

  /**
   * A start steered by its own twin was counted as its givers' evidence (PumpingDefence.admit): what
   * it counted is kept, sealed, under its number for a window, the latest attempt only. A proof of that
   * number by a method charged on proof takes it back (takeSteered): the user who followed the graded
   * answer paid with a call from the number; a pool that never proves keeps its evidence.
   */
  async rememberSteered(phoneNumber: string, taken: CountedKeys): Promise<void> {
    // Its id names the one take-back its proofs may make (takeSteered).
    const value = this.keys.seal(JSON.stringify({ ...taken, id: randomUUID() }));
    await this.store.set(
      pumpKey(PUMP.steered, this.keys.digest(phoneNumber)),
      value,
      this.settings.windowMs,
      EVICTABLE,
    );
  }

  /**
   * Takes back the number's steered attempt, once: proofs handled together (on several instances)
   * read the same attempt, and only the one that claims its id (set-if-absent) takes it back.
   */
  async takeSteered(phoneNumber: string): Promise<void> {
    const k = pumpKey(PUMP.steered, this.keys.digest(phoneNumber));
    const value = await this.store.get(k);
    if (value === null) return;
    let taken: CountedKeys & { id?: unknown };
    try {
      taken = JSON.parse(this.keys.open(value) ?? '') as CountedKeys & { id?: unknown };
    } catch {
      return;
    }
    if (!Array.isArray(taken?.counters) || !Array.isArray(taken.shares) || typeof taken.id !== 'string')
      return;
    if (
      !(await this.store.setIfAbsent(
        pumpKey(PUMP.steeredTaken, taken.id),
        '1',
        this.settings.windowMs,
        EVICTABLE,
      ))
    )
      return;
    await this.store.delete(k);
    await takeBack(this.store, taken);
  }
}

/** Gives back what a counted start took: each counter one, each giver's balance one start (RangeStats.countStart). */
export async function takeBack(store: VerificationStore, taken: CountedKeys): Promise<void> {
  await Promise.all([
    ...taken.counters.map(([k, evictable, ttl]) =>
      store.increment(k, -1, ttl, evictable ? EVICTABLE : undefined),
    ),
    ...taken.shares.map((k) => store.increment(k, -START_WEIGHT, 2 * WEEK_MS, EVICTABLE)),
  ]);
}
