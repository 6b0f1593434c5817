import { DAY_MS } from '../core/clock.js';
import type { StoreWriteOptions } from '../store/verification-store.interface.js';
import type { DataKeys } from '../core/data-keys.js';
import { digest } from '../core/digest.js';
import type { Standing } from './giver-shares.js';

/** Countries remember a week: the slowest drip they must see (two fixed weeks read as a sliding one). */
export const WEEK_MS = 7 * DAY_MS;
/** Countries count their starts of the last five to ten minutes: users still typing their code. */
export const RECENT_MS = 5 * 60_000;

/**
 * Store keys. A subject's counters are named by its tag (its id's keyed digest, taken once per subject
 * and call: a start reads about a dozen of each subject's counters); numbers and callers likewise.
 */
export const rangeStatsKey = {
  starts: (tag: string, w: number) => `protect:pump:s:${tag}:${w}`,
  verified: (tag: string, w: number) => `protect:pump:v:${tag}:${w}`,
  day: (tag: string, d: number) => `protect:pump:dv:${tag}:${d}`,
  dayStarts: (tag: string, d: number) => `protect:pump:ds:${tag}:${d}`,
  dayRanges: (tag: string, d: number) => `protect:pump:dr:${tag}:${d}`,
  /** `of`: the giver's digest: its balance of starts counted in places this week (giver-shares.ts). */
  share: (of: string, wk: number) => `protect:pump:sh:${of}:${wk}`,
  /**
   * Countries: the `slot`-th distinct network past its share that started on the UTC day (its digest
   * with the country's id; giver-shares.ts, PAST_NETWORKS_FLAG slots).
   */
  pastNetwork: (tag: string, d: number, slot: number) => `protect:pump:pns:${tag}:${d}:${slot}`,
  weekStarts: (tag: string, wk: number) => `protect:pump:ws:${tag}:${wk}`,
  weekVerified: (tag: string, wk: number) => `protect:pump:wv:${tag}:${wk}`,
  recent: (tag: string, b: number) => `protect:pump:r:${tag}:${b}`,
  /** `of`: the digest of the subject's id and the range. */
  dayRange: (of: string, d: number) => `protect:pump:drm:${of}:${d}`,
  /** `of`: the number's digest, as in `number` and `verifiedNumber`. */
  dayNumber: (of: string, d: number) => `protect:pump:dn:${of}:${d}`,
  known: (tag: string) => `protect:pump:known:${tag}`,
  hold: (tag: string) => `protect:pump:hold:${tag}`,
  callers: (tag: string, w: number) => `protect:pump:c:${tag}:${w}`,
  /** `of`: the digest of the subject's id and the caller (an older mark: and `n:<E.164>`). */
  caller: (of: string, w: number) => `protect:pump:cm:${of}:${w}`,
  /**
   * `of`: the number's digest: its starts in the window, and its mark for its range's and prefix's bursts
   * (RangeBursts: created at 0 with the limits; new to them where its increment answers 1). An older instance marked it under `protect:pump:nm:`.
   */
  number: (of: string, w: number) => `protect:pump:n:${of}:${w}`,
  verifiedNumber: (of: string, w: number) => `protect:pump:vn:${of}:${w}`,
  session: (requestId: string) => `protect:pump:session:${digest(requestId)}`,
  steered: (of: string) => `protect:pump:st:${of}`,
  steeredTaken: (id: string) => `protect:pump:stt:${id}`,
  givenBack: (of: string, wk: number) => `protect:pump:gb:${of}:${wk}`,
};

const key = rangeStatsKey;

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
    return key.session(requestId);
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
export function fineOf(countryId: string): string {
  return `${countryId}#fine`;
}

export function volumeOf(countryId: string): string {
  return `${countryId}#all`;
}

/** Whether a counter of the subject `id` keeps a start of this standing (else it is taken back). */
export function keeps(id: string, standing: Standing): boolean {
  if (id.endsWith('#all')) return true;
  if (id.endsWith('#fine')) return standing !== 'past';
  if (id.startsWith('prefix:') || id.startsWith('country:')) return standing === 'within';
  return true;
}

/** Whether `id` is a country's own subject (what its judgement of everyone reads), not one of its twins. */
export function isCountry(id: string): boolean {
  return id.startsWith('country:') && !id.includes('#');
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
export function rememberedOf(credited: readonly string[], standing: Standing | undefined): string[] {
  return [
    `+${standing ?? 'all'}`,
    ...credited.filter((id) => id.startsWith('client:') || id.startsWith('network:')),
  ];
}

/** The ids a remembered session is credited at (see rememberedOf); a list kept whole (before) as it is. */
export function creditedOf(remembered: readonly string[], own: readonly string[]): string[] {
  const head = remembered[0];
  if (head === undefined || !head.startsWith('+')) return [...remembered];
  const all = [...own, ...remembered.slice(1)];
  return head === '+all' ? all : creditedAt(all, head.slice(1) as Standing);
}

/** Ranges and prefixes count distinct callers (the burst signature). */
export function bursty(id: string): boolean {
  return id.startsWith('range:') || id.startsWith('prefix:');
}

/** Prefixes and countries are judged over the day too (the slow drip). */
export function judgedByDay(id: string): boolean {
  return id.startsWith('prefix:') || id.startsWith('country:');
}

/** Ranges, prefixes and countries keep a baseline; callers a record. */
export function hasBaseline(id: string): boolean {
  return id.startsWith('range:') || id.startsWith('prefix:') || id.startsWith('country:');
}

/** Country counters are few (one per country): kept. Every other subject's entries are evictable. */
export function options(id: string): StoreWriteOptions | undefined {
  return id.startsWith('country:') ? undefined : EVICTABLE;
}
