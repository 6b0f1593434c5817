import { DAY_MS } from '../core/clock.js';
import type { StoreWriteOptions } from '../store/verification-store.interface.js';
import {
  bursty,
  CALLER_SHARE_PER_WEEK,
  hasBaseline,
  isPlace,
  judgedByDay,
  options,
  rangeStatsKey as key,
  RECENT_MS,
  WEEK_MS,
} from './range-stats-keys.js';
import { slidingCount, type SubjectCounts } from './pumping-counts.js';
import { OWNER_RETRIES } from './pumping-rules.js';

import { EVICTABLE } from './range-stats-keys.js';

/**
 * A subject the defence counts: `range:+7916123`, `prefix:+7916`, `country:RU`, `owner:…`,
 * `client:…`, `network:…`.
 */
export interface StatsSubject {
  id: string;
  /** Ranges, prefixes and countries keep a day counter of distinct verified numbers: their normal rate. */
  withBaseline: boolean;
}

import { RangeBursts, type BurstMarks } from './range-bursts.js';

export type { HoldState } from './range-holds.js';
export type { BurstMarks } from './range-bursts.js';

/** A start counted: each subject's current-window count including it, and how to take it back. */
export interface CountedStart {
  /** Per subject id: the current window's starts before this one, as the store counted them atomically. */
  before: Map<string, number>;
  /** Per range or prefix id: its current window's distinct callers before this start's (counted atomically). */
  callersBefore: Map<string, number>;
  release(): Promise<void>;
}

/**
 * The pumping defence's counts in the store, shared by every instance: starts (every one that can
 * be charged, and every attempt a hold refused: money, not numbers) and distinct verified numbers
 * per subject in two fixed windows (read as one sliding window), day counters of distinct verified
 * numbers for ranges, prefixes and countries (a range's normal rate: only a proof raises it, never
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
    const number = async (k: string): Promise<number> => {
      const n = Number(await this.store.get(k));
      return Number.isFinite(n) && n > 0 ? n : 0;
    };
    // Read with the subjects' counts (one batch).
    const own =
      phoneNumber === undefined
        ? Promise.resolve(0)
        : Promise.all([
            number(key.number(this.keys.digest(phoneNumber), w)),
            number(key.number(this.keys.digest(phoneNumber), w - 1)),
          ]).then(([current, previous]) => Math.min(OWNER_RETRIES, slidingCount(current, previous, elapsed)));
    // Awaited later, or not at all when another read fails first: never an unhandled rejection.
    own.catch(() => undefined);
    const rows = await Promise.all(
      subjects.map(async (s) => {
        const tag = this.keys.digest(s.id);
        const burst = bursty(s.id);
        const daily = judgedByDay(s.id);
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
        const weekCounts = s.id.startsWith('country:')
          ? Promise.all([
              number(key.weekStarts(tag, wk)),
              number(key.weekStarts(tag, wk - 1)),
              number(key.weekVerified(tag, wk)),
              number(key.weekVerified(tag, wk - 1)),
              number(key.recent(tag, Math.floor(now / RECENT_MS))),
              number(key.recent(tag, Math.floor(now / RECENT_MS) - 1)),
            ])
          : undefined;
        dayCounts?.catch(() => undefined);
        weekCounts?.catch(() => undefined);
        const [sc, sp, vc, vp, previousDay, known, cc, cp] = await Promise.all([
          number(key.starts(tag, w)),
          number(key.starts(tag, w - 1)),
          number(key.verified(tag, w)),
          number(key.verified(tag, w - 1)),
          s.withBaseline ? number(key.day(tag, day - 1)) : Promise.resolve(0),
          s.withBaseline ? Promise.resolve(null) : this.store.get(key.known(tag)),
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
        if (s.withBaseline) counts.baseline = (previousDay * windowMs) / DAY_MS;
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
          const [wsc, wsp, wvc, wvp, rc, rp] = await weekCounts;
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
   * not go ahead and nothing was sent).
   */
  async countStart(
    subjects: StatsSubject[],
    phoneNumber?: string,
    caller?: string,
    marks?: BurstMarks,
  ): Promise<CountedStart> {
    const w = Math.floor(this.store.now() / this.settings.windowMs);
    const ttl = 2 * this.settings.windowMs;
    const bursts = this.countBursts(subjects, w, phoneNumber, caller, marks);
    const day = Math.floor(this.store.now() / DAY_MS);
    type Counter = readonly [
      id: string,
      key: string,
      o: StoreWriteOptions | undefined,
      ttl: number,
      place: boolean,
    ];
    const keys: Counter[] = subjects.map((s) => [
      s.id,
      key.starts(this.keys.digest(s.id), w),
      options(s.id),
      ttl,
      isPlace(s.id),
    ]);
    if (phoneNumber !== undefined)
      keys.push(['', key.number(this.keys.digest(phoneNumber), w), EVICTABLE, ttl, false]);
    for (const s of subjects.filter((x) => judgedByDay(x.id)))
      keys.push(['', key.dayStarts(this.keys.digest(s.id), day), options(s.id), 2 * DAY_MS, true]);
    const week = Math.floor(this.store.now() / WEEK_MS);
    for (const s of subjects.filter((x) => x.id.startsWith('country:')))
      keys.push(
        ['', key.weekStarts(this.keys.digest(s.id), week), undefined, 2 * WEEK_MS, true],
        [
          '',
          key.recent(this.keys.digest(s.id), Math.floor(this.store.now() / RECENT_MS)),
          undefined,
          2 * RECENT_MS,
          true,
        ],
      );
    // One caller adds at most its week's share to a range, prefix or country (counted in the same batch).
    const share =
      caller === undefined
        ? undefined
        : this.store.increment(key.share(this.keys.digest(caller), week), 1, 2 * WEEK_MS, EVICTABLE);
    const [values, newTo, taken] = await Promise.all([
      Promise.all(keys.map(([, k, o, t]) => this.store.increment(k, 1, t, o))),
      bursts,
      share,
    ]);
    const callersBefore = new Map(newTo.filter((x) => x !== undefined));
    const undo = (list: Counter[]) =>
      Promise.all(list.map(([, k, o, t]) => this.store.increment(k, -1, t, o)));
    // Past it, the start counts for its callers and its range only: what one caller does can hold that
    // caller, and the block of numbers it pumps (a range is narrow: many addresses concentrated on one
    // range are still held there), never a prefix or a country of other people.
    const ranges = new Set(
      subjects
        .filter((x) => x.id.startsWith('range:'))
        .flatMap((x) => [key.starts(this.keys.digest(x.id), w), key.dayStarts(this.keys.digest(x.id), day)]),
    );
    const shared = (k: Counter) => k[4] && !ranges.has(k[1]);
    let held = keys;
    if (taken !== undefined && taken.value > CALLER_SHARE_PER_WEEK) {
      await undo(keys.filter(shared));
      held = keys.filter((k) => !shared(k));
    }
    let released = false;
    return {
      before: new Map(keys.map(([id], i) => [id, values[i]!.value - 1])),
      callersBefore,
      release: async () => {
        if (released) return;
        released = true;
        await undo(held);
      },
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
        const tag = this.keys.digest(id);
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

  /** Which subjects a started session belongs to, until it can no longer be verified. */
  async rememberSession(requestId: string, ids: string[], ttlMs: number): Promise<void> {
    // Sealed: the ids name the caller (an owner, a client key).
    await this.store.set(key.session(requestId), this.keys.seal(JSON.stringify(ids)), ttlMs, EVICTABLE);
  }

  /** The subjects of a session's start, once (later calls answer undefined). */
  async takeSession(requestId: string): Promise<string[] | undefined> {
    const k = key.session(requestId);
    const value = await this.store.get(k);
    if (value === null) return undefined;
    await this.store.delete(k);
    try {
      const ids: unknown = JSON.parse(this.keys.open(value) ?? '');
      return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? ids : undefined;
    } catch {
      return undefined;
    }
  }
}
