import { DAY_MS } from '../core/clock.js';
import type { StoreWriteOptions } from '../store/verification-store.interface.js';
import type { DataKeys } from '../core/data-keys.js';
import { digest } from '../core/digest.js';
import type { Giver, Standing } from './giver-shares.js';

/** Countries remember a week: the slowest drip they must see (two fixed weeks read as a sliding one). */
export const WEEK_MS = 7 * DAY_MS;
/** Countries count their starts of the last five to ten minutes: users still typing their code. */
export const RECENT_MS = 5 * 60_000;

/**
 * What each kind of counter is called in its store key (pumpKey). A subject's counters are named by its
 * tag (its id's keyed digest, taken once per subject and call: a start reads about a dozen of each
 * subject's counters); numbers and callers likewise.
 */
export const PUMP = {
  starts: 's',
  verified: 'v',
  day: 'dv',
  dayStarts: 'ds',
  dayRanges: 'dr',
  /** `of`: the giver's digest: its balance of starts counted in places this week (giver-shares.ts). */
  share: 'sh',
  /**
   * Countries: the `slot`-th distinct network past its share that started on the UTC day (its digest
   * with the country's id; giver-shares.ts, PAST_NETWORKS_FLAG slots).
   */
  pastNetwork: 'pns',
  weekStarts: 'ws',
  weekVerified: 'wv',
  recent: 'r',
  /** `of`: the digest of the subject's id and the range. */
  dayRange: 'drm',
  /** `of`: the number's digest, as in `number` and `verifiedNumber`. */
  dayNumber: 'dn',
  known: 'known',
  hold: 'hold',
  callers: 'c',
  /** `of`: the digest of the subject's id and the caller (an older mark: and `n:<E.164>`). */
  caller: 'cm',
  /**
   * `of`: the number's digest: its starts in the window, and its mark for its range's and prefix's bursts
   * (RangeBursts: created at 0 with the limits; new to them where its increment answers 1). An older instance marked it under `protect:pump:nm:`.
   */
  number: 'n',
  verifiedNumber: 'vn',
  /** `of`: the request id's digest (sessionKey). */
  session: 'session',
  steered: 'st',
  steeredTaken: 'stt',
  givenBack: 'gb',
} as const;

/** A counter's keys in the period `n` (window, day, week) and the one before: two fixed periods read as one sliding. */
export function periods(kind: PumpKind, of: string, n: number): [string, string] {
  return [pumpKey(kind, of, n), pumpKey(kind, of, n - 1)];
}

/** What a kind of counter is called in its key. */
export type PumpKind = (typeof PUMP)[keyof typeof PUMP];

/** A store key of the defence: `protect:pump:<kind>:<of>`, then its window (day, week) and slot, if any. */
export function pumpKey(
  kind: (typeof PUMP)[keyof typeof PUMP],
  of: string,
  n?: number,
  slot?: number,
): string {
  const k = `protect:pump:${kind}:${of}`;
  return n === undefined ? k : slot === undefined ? `${k}:${n}` : `${k}:${n}:${slot}`;
}

/** Marks an id a remembered session keeps as its tag (RangeHolds.rememberSession): `~` and the tag. */
export const TAGGED = '~';

/** The tag an id's counters are named by: its keyed digest, or the tag it was kept as. */
export function tagOf(keys: DataKeys, id: string): string {
  return id.startsWith(TAGGED) ? id.slice(TAGGED.length) : keys.digest(id);
}

/** Keys RangeStats' callers name without counting (erasure). */
export const RangeStatsKeys = {
  /** Store key of the subjects a session's start was counted for (sealed: they name the caller). */
  sessionKey(requestId: string): string {
    return pumpKey(PUMP.session, digest(requestId));
  },
};

/** Anyone can make the defence create one of these per range or caller: a bounded store may evict them among themselves. */
export const EVICTABLE: StoreWriteOptions = { evictable: true };

/**
 * A country's twins (giver-shares.ts): the country itself counts starts within every giver's
 * share; its callers-bounded twin those within its callers' (client key, address, owner) shares,
 * past a network's too; its volume every start. Each counts the verifications of the starts it
 * counted. A start is judged by the one that counts it most narrowly: what one giver does past its
 * share holds that giver, and changes nothing for others.
 */
/** The suffix of a country's callers-bounded twin's id (`country:RU#fine`). */
export const FINE = '#fine';
/** The suffix of a country's volume twin's id (`country:RU#all`). */
export const VOLUME = '#all';

/** Whether a counter of the subject `id` keeps a start of this standing (else it is taken back). */
export function keeps(id: string, standing: Standing): boolean {
  if (id.endsWith(VOLUME)) return true;
  if (id.endsWith(FINE)) return standing !== 'past';
  if (id.startsWith('prefix:') || id.startsWith('country:')) return standing === 'within';
  return true;
}

/** Of a start's credited ids, those its verification counts for (keeps). */
export function creditedAt(ids: readonly string[], standing: Standing): string[] {
  return ids.filter((id) => keeps(id, standing));
}

/**
 * What a started session keeps of the ids its start credited (`creditedOf` reads it back): its
 * standing (`+within`, `+network`, `+past`; `+all`: none, every id credited), then the ids its
 * verification cannot name by itself (ownIds names its place, owner and twins): its client key's and network's.
 */
export function rememberedOf(
  credited: readonly { readonly id: string }[],
  standing: Standing | undefined,
): string[] {
  const kept = [`+${standing ?? 'all'}`];
  for (const { id } of credited) if (id.startsWith('client:') || id.startsWith('network:')) kept.push(id);
  return kept;
}

/** The ids a remembered session is credited at (see rememberedOf); a list kept whole (before) as it is. */
export function creditedOf(remembered: readonly string[], own: readonly string[]): string[] {
  const head = remembered[0];
  if (head === undefined || !head.startsWith('+')) return [...remembered];
  const all = [...own, ...remembered.slice(1)];
  return head === '+all' ? all : creditedAt(all, head.slice(1) as Standing);
}

/** What a subject's counters are, by its kind (its id up to `:`): see traitsOf. */
export interface SubjectTraits {
  /** Ranges and prefixes count distinct callers (the burst signature). */
  bursty: boolean;
  /** Prefixes and countries (and a country's twins) are judged over the day too (the slow drip). */
  daily: boolean;
  /** Ranges, prefixes and countries keep a baseline; callers a record. */
  baseline: boolean;
  /** A country or one of its twins: judged over the week too, and its counters kept (one per country). */
  countryWide: boolean;
  /** A country's own subject (what its judgement of everyone reads), not one of its twins. */
  country: boolean;
  /** Country counters are few (one per country): kept. Every other subject's entries are evictable. */
  options: StoreWriteOptions | undefined;
}

const CALLER_TRAITS: SubjectTraits = {
  bursty: false,
  daily: false,
  baseline: false,
  countryWide: false,
  country: false,
  options: EVICTABLE,
};
const COUNTRY_TRAITS: SubjectTraits = {
  ...CALLER_TRAITS,
  daily: true,
  baseline: true,
  countryWide: true,
  country: true,
  options: undefined,
};
const TWIN_TRAITS: SubjectTraits = { ...COUNTRY_TRAITS, country: false };
const KIND_TRAITS = new Map<string, SubjectTraits>([
  ['range', { ...CALLER_TRAITS, bursty: true, baseline: true }],
  ['prefix', { ...CALLER_TRAITS, bursty: true, daily: true, baseline: true }],
  ['country', COUNTRY_TRAITS],
]);

/** A subject's traits, from its id's kind: a range, prefix or country (its twins: `#`), else a caller. */
export function traitsOf(id: string): SubjectTraits {
  const colon = id.indexOf(':');
  const traits = (colon > 0 && KIND_TRAITS.get(id.slice(0, colon))) || CALLER_TRAITS;
  return traits === COUNTRY_TRAITS && id.includes('#') ? TWIN_TRAITS : traits;
}

/** Counters a counted start incremented (key, evictable, ttl) and the givers' balances it was charged to. */
export interface CountedKeys {
  counters: [key: string, evictable: boolean, ttlMs: number][];
  shares: string[];
}

/** A counter a start counts: its subject's id (keeps says whether a standing keeps it), key, write options, ttl. */
export type Counter = readonly [id: string, key: string, o: StoreWriteOptions | undefined, ttl: number];

/** What a counter list and the givers charged took, as takeBack gives it back (each giver's balance key). */
export function countedKeys(
  list: readonly Counter[],
  charged: readonly Giver[],
  givers: readonly Giver[],
  shareKeys: readonly string[],
): CountedKeys {
  const counters: CountedKeys['counters'] = [];
  for (const [, k, o, t] of list) counters.push([k, o?.evictable === true, t]);
  const shares: string[] = [];
  for (const g of charged) shares.push(shareKeys[givers.indexOf(g)]!);
  return { counters, shares };
}
