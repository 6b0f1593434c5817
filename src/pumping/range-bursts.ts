import { EVICTABLE, pumpKey, PUMP, traitsOf } from './range-stats-keys.js';
import { RangeHolds, type Tagged } from './range-holds.js';

/**
 * What a start read of its burst marks with the request limits (`markBursts`), in window `window`: it
 * holds nothing that decides a count, and gives nothing back (`release`: a hold of protection's). `first`:
 * it created its number's count (at 0), a hint that it goes first; `ids`: then, the ranges and prefixes
 * where its caller was not marked, where countBursts counts it ahead (taken back if it was not new).
 */
export interface BurstMarks {
  window: number;
  first: boolean;
  ids: ReadonlySet<string>;
  release(): Promise<void>;
}

/** A burst mark holds nothing to give back. */
const NOTHING_TO_RELEASE = async (): Promise<void> => undefined;

/** How long a burst mark outlives its window: instances' clocks that disagree by up to this still read it. */
export const MARK_SLACK_MS = 60_000;

/**
 * The burst signature in the store: a start of a number new to a range or prefix in the window, from a
 * caller new to it, is counted there (many numbers from many addresses). One number from many
 * addresses (the per-number limits' business, and a stranger must not hold its owner's range), or many
 * numbers from one (an office: the normal minimum's), count once. The number is new where the start is
 * counted (its count's increment answers 1), and a caller is marked seen in a subject only where it is
 * counted there: a start refused before it is counted holds no mark (its first start of a number already
 * started in the window marks nothing). RangeStats adds the other counts.
 */
export class RangeBursts extends RangeHolds {
  /**
   * Reads `caller`'s marks in the current window of each range and prefix, and creates the number's
   * count (see BurstMarks). Taken with the request limits, so that a start that went first is counted in the
   * same round trip as the defence's other counts.
   */
  async markBursts(
    subjects: readonly { id: string }[],
    phoneNumber?: string,
    caller?: string,
  ): Promise<BurstMarks> {
    const w = Math.floor(this.store.now() / this.settings.windowMs);
    const none = { window: w, first: false, ids: new Set<string>(), release: NOTHING_TO_RELEASE };
    const ids: string[] = [];
    for (const s of subjects) if (traitsOf(s.id).bursty) ids.push(s.id);
    if (caller === undefined || phoneNumber === undefined || ids.length === 0) return none;
    // The number's count (RangeStats.countStart), created at 0 and as long-lived: a count of nothing.
    const reads: Promise<boolean | string | null>[] = [
      this.store.setIfAbsent(
        pumpKey(PUMP.number, this.keys.digest(phoneNumber), w),
        '0',
        2 * this.settings.windowMs,
        EVICTABLE,
      ),
    ];
    for (const id of ids) reads.push(this.store.get(this.mark(id, caller, w)));
    const [first, ...seen] = await Promise.all(reads);
    if (!first) return none;
    const unmarked = new Set<string>();
    for (const [i, id] of ids.entries()) if (seen[i] === null) unmarked.add(id);
    return { ...none, first: true, ids: unmarked };
  }

  /**
   * Counts the start where its number (`numberCount`: the number's count with this start, answered by
   * its increment) and its caller were both new, and answers each such subject's distinct callers before
   * it (counted atomically). A start that went first (marks of window `w`) is counted ahead, with its
   * other counts, and takes back what it counted where it was not new; one that did not, whose number was
   * new all the same (the first was refused, or the window rolled over since), marks its caller then (two
   * round trips more).
   */
  protected async countBursts(
    subjects: readonly Tagged[],
    w: number,
    phoneNumber: string | undefined,
    caller: string | undefined,
    marked: BurstMarks | undefined,
    numberCount: Promise<number>,
  ): Promise<(readonly [string, number] | undefined)[]> {
    const tags = new Map<string, string>();
    for (const s of subjects) if (traitsOf(s.id).bursty) tags.set(s.id, this.tag(s));
    if (caller === undefined || phoneNumber === undefined || tags.size === 0) return [];
    const went = marked?.window === w && marked.first;
    const ttl = 2 * this.settings.windowMs;
    const ahead: string[] = [];
    const claims: Promise<[boolean, { value: number }]>[] = [];
    if (went)
      for (const [id, tag] of tags)
        if (marked.ids.has(id)) {
          ahead.push(id);
          claims.push(
            Promise.all([
              this.store.setIfAbsent(this.mark(id, caller, w), '1', this.markTtl(w), EVICTABLE),
              this.store.increment(pumpKey(PUMP.callers, tag, w), 1, ttl, EVICTABLE),
            ]),
          );
        }
    const [count, taken] = await Promise.all([numberCount, Promise.all(claims)]);
    const fresh = count === 1;
    const back: Promise<unknown>[] = [];
    const counted: (readonly [string, number] | undefined)[] = [];
    for (const [i, id] of ahead.entries()) {
      const [won, callers] = taken[i]!;
      if (fresh && won) {
        counted.push([id, callers.value - 1]);
        continue;
      }
      counted.push(undefined);
      back.push(this.store.increment(pumpKey(PUMP.callers, tags.get(id)!, w), -1, ttl, EVICTABLE));
      if (won) back.push(this.store.delete(this.mark(id, caller, w)));
    }
    if (!fresh || went) {
      await Promise.all(back);
      return counted;
    }
    const ids = [...tags.keys()];
    const marks: Promise<boolean>[] = [];
    for (const id of ids)
      marks.push(this.store.setIfAbsent(this.mark(id, caller, w), '1', this.markTtl(w), EVICTABLE));
    const won = await Promise.all(marks);
    const newTo: string[] = [];
    const increments: Promise<{ value: number }>[] = [];
    for (const [i, id] of ids.entries())
      if (won[i]) {
        newTo.push(id);
        increments.push(this.store.increment(pumpKey(PUMP.callers, tags.get(id)!, w), 1, ttl, EVICTABLE));
      }
    const answers = await Promise.all(increments);
    const callersBefore: (readonly [string, number])[] = [];
    for (const [i, id] of newTo.entries()) callersBefore.push([id, answers[i]!.value - 1]);
    return callersBefore;
  }

  /** A caller's mark is read only in its window (the key names it): kept until the window ends, and a minute. */
  private markTtl(w: number): number {
    return (w + 1) * this.settings.windowMs - this.store.now() + MARK_SLACK_MS;
  }

  /** The mark of a caller in a subject's window. */
  private mark(id: string, of: string, w: number): string {
    return pumpKey(PUMP.caller, this.keys.digest(`${id}\n${of}`), w);
  }
}
