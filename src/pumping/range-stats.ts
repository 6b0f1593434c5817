import { DAY_MS } from '../core/clock.js';
import {
  countedKeys,
  EVICTABLE,
  keeps,
  periods,
  pumpKey,
  PUMP,
  RECENT_MS,
  tagOf,
  traitsOf,
  WEEK_MS,
  type CountedKeys,
  type Counter,
  type SubjectTraits,
} from './range-stats-keys.js';
import { countsOf, slidingCount, type SubjectCounts } from './pumping-counts.js';
import { OWNER_RETRIES } from './pumping-rules.js';
import { chargedGivers, networkPast, standingOf, type Giver, type Standing } from './giver-shares.js';

/**
 * A subject the defence counts: `range:+7916123`, `prefix:+7916`, `country:RU`, `owner:…`,
 * `client:…`, `network:…`.
 */
export type StatsSubject = Tagged;

import { RangeBursts, type BurstMarks } from './range-bursts.js';
import { countOf, takeBack, voteSlots, type Tagged } from './range-holds.js';

export type { HoldState } from './range-holds.js';
export type { BurstMarks } from './range-bursts.js';

/** A start counted: each subject's current-window count including it, and how to take it back. */
export interface CountedStart {
  /** Per subject id: the current window's starts before this one, as the store counted them atomically. */
  before: Map<string, number>;
  /** Per range or prefix id: its current window's distinct callers before this start's (counted atomically). */
  callersBefore: Map<string, number>;
  /** Where its givers stood against their shares: which of its country's twins counted it (giver-shares.ts). */
  standing: Standing;
  /** What release() takes back, in a form the store can keep (a steered attempt's, see RangeHolds). */
  taken: CountedKeys;
  release(): Promise<void>;
  /** Takes a refused attempt back from its country's own counts only (PumpingDefence.admit). */
  refused(): Promise<void>;
}

/**
 * The pumping defence's counts in the store, shared by every instance: starts (every one that can be
 * charged, and every attempt a hold refused, but not for its country: money, not numbers) and
 * distinct verified numbers per subject in two fixed windows (read as one sliding window), day
 * counters of distinct verified numbers for ranges, prefixes and countries (a range's normal rate: only a proof raises it, never
 * a start), of starts and of distinct ranges verified in for prefixes and countries (their day's
 * judgement, history and normal rate), a record of completed verifications for callers, holds, and which subjects a started
 * session belongs to (so its verification is counted where its start was). Everything but the
 * country counters is written evictable: one exists per range or caller, and a flood of them must
 * not evict sessions, cooldowns or per-phone limits from a bounded store.
 */
export class RangeStats extends RangeBursts {
  /**
   * Each subject's counts in the sliding window ending now, read at once. The judged number's own
   * earlier starts, up to OWNER_RETRIES, are taken out of its range's and prefix's: an owner who
   * retries never holds their own range (the one per-number dedupe kept); past that, a number's
   * starts weigh like anyone's.
   */
  async read(subjects: StatsSubject[], phoneNumber?: string): Promise<Map<string, SubjectCounts>> {
    const now = this.store.now();
    const { windowMs } = this.settings;
    const w = Math.floor(now / windowMs);
    const elapsed = (now - w * windowMs) / windowMs;
    const day = Math.floor(now / DAY_MS);
    const wk = Math.floor(now / WEEK_MS);
    const recent = Math.floor(now / RECENT_MS);
    // Every counter read, in one list read at once: the number's own starts, then each subject's.
    const keys: string[] = [];
    const numberTag = phoneNumber === undefined ? undefined : this.keys.digest(phoneNumber);
    if (numberTag !== undefined) keys.push(...periods(PUMP.number, numberTag, w));
    const traits: SubjectTraits[] = [];
    for (const s of subjects) {
      const tag = this.tag(s);
      const t = traitsOf(s.id);
      traits.push(t);
      if (t.daily)
        keys.push(
          ...periods(PUMP.dayStarts, tag, day),
          pumpKey(PUMP.day, tag, day),
          ...periods(PUMP.dayRanges, tag, day),
        );
      if (t.countryWide)
        keys.push(
          ...periods(PUMP.weekStarts, tag, wk),
          ...periods(PUMP.weekVerified, tag, wk),
          ...periods(PUMP.recent, tag, recent),
        );
      // Votes are cast in the country's own slots only (votePastNetwork): its twins' are never written.
      if (t.country) keys.push(...voteSlots(tag, day), ...voteSlots(tag, day - 1));
      keys.push(...periods(PUMP.starts, tag, w), ...periods(PUMP.verified, tag, w));
      keys.push(t.baseline ? pumpKey(PUMP.day, tag, day - 1) : pumpKey(PUMP.known, tag));
      if (t.bursty) keys.push(...periods(PUMP.callers, tag, w));
    }
    const reads: Promise<string | null>[] = [];
    for (const k of keys) reads.push(this.store.get(k));
    const values = await Promise.all(reads);
    // Each value as a count (0 for none, or one taken back below 0); `values` says which exist.
    const n: number[] = [];
    for (const v of values) n.push(countOf(v, 0));
    let at = numberTag === undefined ? 0 : 2;
    const own = at === 0 ? 0 : Math.min(OWNER_RETRIES, slidingCount(n[0]!, n[1]!, elapsed));
    const result = new Map<string, SubjectCounts>();
    const read = { now, windowMs, elapsed, day, week: wk, own };
    for (const [i, s] of subjects.entries()) {
      const [counts, next] = countsOf(traits[i]!, n, values, at, read);
      at = next;
      result.set(s.id, counts);
    }
    return result;
  }

  /**
   * Counts a start (or a refused attempt) for each subject, every time: a number's repeated starts
   * cost the host each time. Answers what each current window held before it, read atomically, so
   * that concurrent starts are judged one after the other; `release` takes it back (the start did
   * not go ahead and nothing was sent). Each of `givers` is charged its share (giver-shares.ts);
   * `marks` are the burst marks read with the request limits (RangeBursts). `expected` is the
   * standing its givers' balances showed when read: only what it keeps is counted, the rest read;
   * when the counts (atomic) show another standing, the rest is counted too and what that standing
   * does not keep is taken back. `shareKeys`: the givers' balance keys (RangeHolds.shareKeys), when known.
   */
  async countStart(
    subjects: StatsSubject[],
    phoneNumber?: string,
    caller?: string,
    givers: readonly Giver[] = [],
    marks?: BurstMarks,
    expected: Standing = 'within',
    shareKeys: readonly string[] = this.shareKeys(givers),
  ): Promise<CountedStart> {
    const now = this.store.now();
    const w = Math.floor(now / this.settings.windowMs);
    const ttl = 2 * this.settings.windowMs;
    const day = Math.floor(now / DAY_MS);
    const week = Math.floor(now / WEEK_MS);
    const recent = Math.floor(now / RECENT_MS);
    // Each subject's window count first (`before`), then the number's, the day's and the week's.
    // A subject's counters are named by its tag, taken once (range-stats-keys.ts).
    const all: Counter[] = [];
    const daily: Counter[] = [];
    const weekly: Counter[] = [];
    let country: StatsSubject | undefined;
    for (const s of subjects) {
      const tag = this.tag(s);
      const t = traitsOf(s.id);
      all.push([s.id, pumpKey(PUMP.starts, tag, w), t.options, ttl]);
      if (t.daily) daily.push([s.id, pumpKey(PUMP.dayStarts, tag, day), t.options, 2 * DAY_MS]);
      if (t.countryWide)
        weekly.push(
          [s.id, pumpKey(PUMP.weekStarts, tag, week), undefined, 2 * WEEK_MS],
          [s.id, pumpKey(PUMP.recent, tag, recent), undefined, 2 * RECENT_MS],
        );
      if (t.country && country === undefined) country = s;
    }
    const own = subjects.length;
    if (phoneNumber !== undefined)
      all.push(['', pumpKey(PUMP.number, this.keys.digest(phoneNumber), w), EVICTABLE, ttl]);
    all.push(...daily, ...weekly);
    // What the expected standing keeps is counted; a subject's counter it does not keep is read (for
    // `before`, as if counted), a giver it does not charge too (its balance as if charged).
    const counting: boolean[] = [];
    const pending: Promise<number>[] = [];
    for (const [i, c] of all.entries()) {
      counting.push(keeps(c[0], expected));
      pending.push(this.withStart(c, counting[i]!, i < own));
    }
    const chargedFirst = chargedGivers(givers, expected);
    const charging: boolean[] = [];
    const balanced: Promise<number>[] = [];
    for (const [i, g] of givers.entries()) {
      charging.push(chargedFirst.includes(g));
      balanced.push(this.balanceWithStart(shareKeys[i]!, charging[i]!));
    }
    // The number's count with this start (its increment's answer): 1 where it is new to the window.
    const numberCount = phoneNumber === undefined ? Promise.resolve(0) : pending[own]!;
    const [counts, newTo, balances] = await Promise.all([
      Promise.all(pending),
      this.countBursts(subjects, w, phoneNumber, caller, marks, numberCount),
      Promise.all(balanced),
    ]);
    const callersBefore = new Map<string, number>();
    for (const x of newTo) if (x !== undefined) callersBefore.set(x[0], x[1]);
    // Past a share, the start counts for its callers, its range and its country's volume: what one
    // caller does can hold that caller, and the block of numbers it pumps (a range is narrow: many
    // addresses concentrated on one range are still held there), never a prefix or a country of
    // other people; and it is charged to no giver whose share it passed (giver-shares.ts).
    let standing = standingOf(givers, balances);
    const guessed = standing === expected;
    if (!guessed) {
      // Starts counted concurrently moved a balance: count the rest (what a window held before it, from
      // the count: atomic), then keep what the standing keeps.
      await Promise.all([
        ...all.map(async (c, i) => {
          if (!counting[i]) counts[i] = await this.withStart(c, true, true);
        }),
        ...shareKeys.map(async (k, i) => {
          if (!charging[i]) balances[i] = await this.balanceWithStart(k, true);
        }),
      ]);
      standing = standingOf(givers, balances);
    }
    const charged = chargedGivers(givers, standing);
    if (!guessed)
      await takeBack(
        this.store,
        countedKeys(
          all.filter(([id]) => !keeps(id, standing)),
          givers.filter((g) => !charged.includes(g)),
          givers,
          shareKeys,
        ),
      );
    const past = country && networkPast(givers, balances);
    if (past) await this.votePastNetwork(country!.id, past.id);
    this.notePast(shareKeys, givers, balances);
    const kept: Counter[] = [];
    const before = new Map<string, number>();
    for (const [i, c] of all.entries()) {
      if (keeps(c[0], standing)) kept.push(c);
      if (i < own) before.set(c[0], counts[i]! - 1);
    }
    const taken = countedKeys(kept, charged, givers, shareKeys);
    let released = false;
    return {
      before,
      callersBefore,
      standing,
      taken,
      release: async () => {
        if (released) return;
        released = true;
        await takeBack(this.store, taken);
      },
      refused: () =>
        takeBack(
          this.store,
          countedKeys(
            kept.filter(([id]) => traitsOf(id).country),
            [],
            givers,
            shareKeys,
          ),
        ),
    };
  }

  /** A counter with this start: counted (its increment's answer, atomic), else read as if counted (`read`), else 0. */
  private async withStart(c: Counter, count: boolean, read: boolean): Promise<number> {
    if (count) return (await this.store.increment(c[1], 1, c[3], c[2])).value;
    return read ? countOf(await this.store.get(c[1])) + 1 : 0;
  }

  /**
   * Counts a completed verification of `phoneNumber` for each subject, once per number and window
   * (a number verified again and again is one proof, not many: faked conversions do not multiply),
   * records callers as known, and, once per number and day, feeds the day counters: distinct
   * verified numbers, and for prefixes and countries the distinct ranges verified in (one range
   * vouches once for its prefix, however many of its numbers a farm verifies).
   */
  async countVerified(ids: string[], phoneNumber: string): Promise<void> {
    const now = this.store.now();
    const w = Math.floor(now / this.settings.windowMs);
    const day = Math.floor(now / DAY_MS);
    const [first, firstToday] = await Promise.all([
      this.store.setIfAbsent(
        pumpKey(PUMP.verifiedNumber, this.keys.digest(phoneNumber), w),
        '1',
        2 * this.settings.windowMs,
        EVICTABLE,
      ),
      this.store.setIfAbsent(
        pumpKey(PUMP.dayNumber, this.keys.digest(phoneNumber), day),
        '1',
        DAY_MS,
        EVICTABLE,
      ),
    ]);
    const range = ids.find((id) => id.startsWith('range:'));
    const newRange = async (id: string): Promise<void> => {
      if (range === undefined) return;
      if (
        await this.store.setIfAbsent(
          pumpKey(PUMP.dayRange, this.keys.digest(`${id}\n${range}`), day),
          '1',
          DAY_MS,
          EVICTABLE,
        )
      )
        await this.store.increment(
          pumpKey(PUMP.dayRanges, this.keys.digest(id), day),
          1,
          2 * DAY_MS,
          traitsOf(id).options,
        );
    };
    await Promise.all(
      ids.flatMap((id) => {
        const tag = tagOf(this.keys, id);
        const { options, baseline, daily } = traitsOf(id);
        return [
          first
            ? this.store.increment(pumpKey(PUMP.verified, tag, w), 1, 2 * this.settings.windowMs, options)
            : [],
          !baseline
            ? first
              ? this.store.set(pumpKey(PUMP.known, tag), '1', this.settings.recordTtlMs, options)
              : []
            : firstToday
              ? this.store.increment(pumpKey(PUMP.day, tag, day), 1, 2 * DAY_MS, options)
              : [],
          firstToday && daily ? newRange(id) : [],
          firstToday && id.startsWith('country:')
            ? this.store.increment(pumpKey(PUMP.weekVerified, tag, Math.floor(now / WEEK_MS)), 1, 2 * WEEK_MS)
            : [],
        ];
      }),
    );
  }
}
