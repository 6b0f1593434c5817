import { DAY_MS } from '../core/clock.js';
import type { StoreWriteOptions } from '../store/verification-store.interface.js';
import {
  bursty,
  hasBaseline,
  isCountry,
  keeps,
  judgedByDay,
  options,
  rangeStatsKey as key,
  RECENT_MS,
  tagOf,
  WEEK_MS,
} from './range-stats-keys.js';
import { slidingCount, type SubjectCounts } from './pumping-counts.js';
import { OWNER_RETRIES } from './pumping-rules.js';
import { chargedGivers, networkPast, standingOf, type Giver, type Standing } from './giver-shares.js';

import { EVICTABLE } from './range-stats-keys.js';

/**
 * A subject the defence counts: `range:+7916123`, `prefix:+7916`, `country:RU`, `owner:…`,
 * `client:…`, `network:…`.
 */
export type StatsSubject = Tagged;

import { RangeBursts, type BurstMarks } from './range-bursts.js';
import { takeBack, type CountedKeys, type Tagged } from './range-holds.js';

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
    const number = (k: string): Promise<number> => this.readCount(k, 0);
    // Read with the subjects' counts (one batch).
    const numberTag = phoneNumber === undefined ? undefined : this.keys.digest(phoneNumber);
    const own =
      numberTag === undefined
        ? Promise.resolve(0)
        : Promise.all([number(key.number(numberTag, w)), number(key.number(numberTag, w - 1))]).then(
            ([current, previous]) => Math.min(OWNER_RETRIES, slidingCount(current, previous, elapsed)),
          );
    // Awaited later, or not at all when another read fails first: never an unhandled rejection.
    own.catch(() => undefined);
    const rows = await Promise.all(
      subjects.map(async (s) => {
        const tag = this.tag(s);
        const burst = bursty(s.id);
        const daily = judgedByDay(s.id);
        const baseline = hasBaseline(s.id);
        const dayCounts = daily
          ? Promise.all([
              number(key.dayStarts(tag, day)),
              number(key.dayStarts(tag, day - 1)),
              number(key.day(tag, day)),
              number(key.dayRanges(tag, day)),
              number(key.dayRanges(tag, day - 1)),
            ])
          : undefined;
        const wk = Math.floor(now / WEEK_MS);
        const voted = isCountry(s.id);
        const weekCounts = s.id.startsWith('country:')
          ? Promise.all([
              number(key.weekStarts(tag, wk)),
              number(key.weekStarts(tag, wk - 1)),
              number(key.weekVerified(tag, wk)),
              number(key.weekVerified(tag, wk - 1)),
              number(key.recent(tag, Math.floor(now / RECENT_MS))),
              number(key.recent(tag, Math.floor(now / RECENT_MS) - 1)),
              // Votes are cast in the country's own slots only (votePastNetwork): its twins' are never written.
              voted ? this.pastNetworkVotes(tag, day) : 0,
              voted ? this.pastNetworkVotes(tag, day - 1) : 0,
            ])
          : undefined;
        dayCounts?.catch(() => undefined);
        weekCounts?.catch(() => undefined);
        const [sc, sp, vc, vp, previousDay, known, cc, cp] = await Promise.all([
          number(key.starts(tag, w)),
          number(key.starts(tag, w - 1)),
          number(key.verified(tag, w)),
          number(key.verified(tag, w - 1)),
          baseline ? number(key.day(tag, day - 1)) : Promise.resolve(0),
          baseline ? Promise.resolve(null) : this.store.get(key.known(tag)),
          burst ? number(key.callers(tag, w)) : Promise.resolve(0),
          burst ? number(key.callers(tag, w - 1)) : Promise.resolve(0),
        ]);
        const mine = s.id.startsWith('range:') || s.id.startsWith('prefix:') ? await own : 0;
        const counts: SubjectCounts = {
          starts: Math.max(0, slidingCount(sc, sp, elapsed) - mine),
          verified: slidingCount(vc, vp, elapsed),
          known: known !== null,
          current: sc,
          raw: {
            at: now,
            windowMs,
            starts: [sc, sp],
            verified: [vc, vp],
            callers: [cc, cp],
            deducted: Math.min(mine, slidingCount(sc, sp, elapsed)),
          },
        };
        if (baseline) counts.baseline = (previousDay * windowMs) / DAY_MS;
        if (dayCounts) {
          const [dsc, dsp, dvc, drc, drp] = await dayCounts;
          const dayElapsed = (now - day * DAY_MS) / DAY_MS;
          counts.baseline = (drp * windowMs) / DAY_MS;
          counts.ranges = Math.max(drc, drp);
          counts.day = {
            starts: Math.max(0, slidingCount(dsc, dsp, dayElapsed) - mine),
            verified: slidingCount(dvc, previousDay, dayElapsed),
            baseline: drp,
            raw: { starts: [dsc, dsp], verified: [dvc, previousDay] },
          };
        }
        if (weekCounts) {
          const [wsc, wsp, wvc, wvp, rc, rp, pnc, pnp] = await weekCounts;
          // Distinct networks of either UTC day (never the two added: one network is one vote).
          counts.networksPast = Math.max(pnc, pnp);
          const weekElapsed = (now - wk * WEEK_MS) / WEEK_MS;
          counts.recent = rc + rp;
          counts.recentMs = RECENT_MS + (now % RECENT_MS);
          counts.week = {
            starts: Math.max(0, slidingCount(wsc, wsp, weekElapsed) - mine),
            verified: slidingCount(wvc, wvp, weekElapsed),
          };
        }
        if (burst) {
          counts.callers = slidingCount(cc, cp, elapsed);
          counts.currentCallers = cc;
        }
        return [s.id, counts] as const;
      }),
    );
    return new Map(rows);
  }

  /**
   * Counts a start (or a refused attempt) for each subject, every time: a number's repeated starts
   * cost the host each time. Answers what each current window held before it, read atomically, so
   * that concurrent starts are judged one after the other; `release` takes it back (the start did
   * not go ahead and nothing was sent). Each of `givers` is charged its share (giver-shares.ts);
   * `marks` are the burst marks read with the request limits (RangeBursts). `expected` is the
   * standing its givers' balances showed when read: only what it keeps is counted, the rest read;
   * when the counts (atomic) show another standing, the rest is counted too and what that standing
   * does not keep is taken back.
   */
  async countStart(
    subjects: StatsSubject[],
    phoneNumber?: string,
    caller?: string,
    givers: readonly Giver[] = [],
    marks?: BurstMarks,
    expected: Standing = 'within',
  ): Promise<CountedStart> {
    const w = Math.floor(this.store.now() / this.settings.windowMs);
    const ttl = 2 * this.settings.windowMs;
    const day = Math.floor(this.store.now() / DAY_MS);
    // Each counter names its subject: keeps(id, standing) says whether it counts a start of that standing.
    type Counter = readonly [id: string, key: string, o: StoreWriteOptions | undefined, ttl: number];
    // A subject's counters are named by its tag, taken once (range-stats-keys.ts).
    const tags = subjects.map((s) => this.tag(s));
    const keys: Counter[] = subjects.map((s, i) => [s.id, key.starts(tags[i]!, w), options(s.id), ttl]);
    const more: Counter[] = [];
    if (phoneNumber !== undefined)
      more.push(['', key.number(this.keys.digest(phoneNumber), w), EVICTABLE, ttl]);
    for (const [i, s] of subjects.entries())
      if (judgedByDay(s.id)) more.push([s.id, key.dayStarts(tags[i]!, day), options(s.id), 2 * DAY_MS]);
    const week = Math.floor(this.store.now() / WEEK_MS);
    for (const [i, s] of subjects.entries())
      if (s.id.startsWith('country:'))
        more.push(
          [s.id, key.weekStarts(tags[i]!, week), undefined, 2 * WEEK_MS],
          [s.id, key.recent(tags[i]!, Math.floor(this.store.now() / RECENT_MS)), undefined, 2 * RECENT_MS],
        );
    const shareKeys = this.shareKeys(givers);
    const all = [...keys, ...more];
    const add = ([, k, o, t]: Counter): Promise<number> =>
      this.store.increment(k, 1, t, o).then((r) => r.value);
    // What the expected standing keeps is counted; a subject's counter it does not keep is read (for
    // `before`, as if counted), a giver it does not charge too (its balance as if charged).
    const counting = all.map(([id]) => keeps(id, expected));
    const chargedFirst = chargedGivers(givers, expected);
    const charging = givers.map((g) => chargedFirst.includes(g));
    const values = Promise.all(
      all.map((c, i) =>
        counting[i] ? add(c) : i < keys.length ? this.readCount(c[1]).then((v) => v + 1) : 0,
      ),
    );
    // The number's count with this start (its increment's answer): 1 where it is new to the window.
    const numberCount = values.then((v) => v[keys.length] ?? 0);
    numberCount.catch(() => undefined);
    const [counts, newTo, balances] = await Promise.all([
      values,
      this.countBursts(subjects, w, phoneNumber, caller, marks, numberCount),
      Promise.all(shareKeys.map((k, i) => this.balanceWithStart(k, charging[i]!))),
    ]);
    const callersBefore = new Map(newTo.filter((x) => x !== undefined));
    // What a counter list and a giver list took, as takeBack gives it back.
    const counted = (list: Counter[], charged: Giver[]): CountedKeys => ({
      counters: list.map(([, k, o, t]) => [k, o?.evictable === true, t]),
      shares: charged.map((g) => shareKeys[givers.indexOf(g)]!),
    });
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
          if (!counting[i]) counts[i] = await add(c);
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
        counted(
          all.filter(([id]) => !keeps(id, standing)),
          givers.filter((g) => !charged.includes(g)),
        ),
      );
    const country = subjects.find((s) => isCountry(s.id));
    const past = country && networkPast(givers, balances);
    if (past) await this.votePastNetwork(country!.id, past.id);
    this.notePast(shareKeys, givers, balances);
    const kept = all.filter(([id]) => keeps(id, standing));
    const taken = counted(kept, charged);
    let released = false;
    return {
      before: new Map(keys.map(([id], i) => [id, counts[i]! - 1])),
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
          counted(
            kept.filter(([id]) => isCountry(id)),
            [],
          ),
        ),
    };
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
        key.verifiedNumber(this.keys.digest(phoneNumber), w),
        '1',
        2 * this.settings.windowMs,
        EVICTABLE,
      ),
      this.store.setIfAbsent(key.dayNumber(this.keys.digest(phoneNumber), day), '1', DAY_MS, EVICTABLE),
    ]);
    const range = ids.find((id) => id.startsWith('range:'));
    const newRange = async (id: string): Promise<void> => {
      if (range === undefined) return;
      if (
        await this.store.setIfAbsent(
          key.dayRange(this.keys.digest(`${id}\n${range}`), day),
          '1',
          DAY_MS,
          EVICTABLE,
        )
      )
        await this.store.increment(key.dayRanges(this.keys.digest(id), day), 1, 2 * DAY_MS, options(id));
    };
    await Promise.all(
      ids.flatMap((id) => {
        const tag = tagOf(this.keys, id);
        return [
          first ? this.store.increment(key.verified(tag, w), 1, 2 * this.settings.windowMs, options(id)) : [],
          !hasBaseline(id)
            ? first
              ? this.store.set(key.known(tag), '1', this.settings.recordTtlMs, options(id))
              : []
            : firstToday
              ? this.store.increment(key.day(tag, day), 1, 2 * DAY_MS, options(id))
              : [],
          firstToday && judgedByDay(id) ? newRange(id) : [],
          firstToday && id.startsWith('country:')
            ? this.store.increment(key.weekVerified(tag, Math.floor(now / WEEK_MS)), 1, 2 * WEEK_MS)
            : [],
        ];
      }),
    );
  }
}
