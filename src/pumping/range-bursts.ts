import { bursty, EVICTABLE, rangeStatsKey as key } from './range-stats-keys.js';
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
    const none = { window: w, first: false, ids: new Set<string>(), release: async () => undefined };
    const ids = subjects.filter((s) => bursty(s.id)).map((s) => s.id);
    if (caller === undefined || phoneNumber === undefined || ids.length === 0) return none;
    // The number's count (RangeStats.countStart), created at 0 and as long-lived: a count of nothing.
    const [first, ...seen] = await Promise.all([
      this.store.setIfAbsent(
        key.number(this.keys.digest(phoneNumber), w),
        '0',
        2 * this.settings.windowMs,
        EVICTABLE,
      ),
      ...ids.map((id) => this.store.get(this.mark(id, caller, w))),
    ]);
    if (!first) return none;
    return { ...none, first, ids: new Set(ids.filter((_, i) => seen[i] === null)) };
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
    const tags = new Map(subjects.filter((s) => bursty(s.id)).map((s) => [s.id, this.tag(s)]));
    const ids = [...tags.keys()];
    if (caller === undefined || phoneNumber === undefined || ids.length === 0) return [];
    const went = marked?.window === w && marked.first;
    const ahead = went ? ids.filter((id) => marked.ids.has(id)) : [];
    const ttl = 2 * this.settings.windowMs;
    const callers = (id: string): string => key.callers(tags.get(id)!, w);
    const take = (id: string): Promise<boolean> =>
      this.store.setIfAbsent(this.mark(id, caller, w), '1', this.markTtl(w), EVICTABLE);
    const [count, taken] = await Promise.all([
      numberCount,
      Promise.all(
        ahead.map((id) => Promise.all([take(id), this.store.increment(callers(id), 1, ttl, EVICTABLE)])),
      ),
    ]);
    const fresh = count === 1;
    const back = ahead.flatMap((id, i) => {
      const [won] = taken[i]!;
      if (fresh && won) return [];
      return [
        this.store.increment(callers(id), -1, ttl, EVICTABLE),
        won ? this.store.delete(this.mark(id, caller, w)) : Promise.resolve(),
      ];
    });
    const counted = ahead.map((id, i) =>
      fresh && taken[i]![0] ? ([id, taken[i]![1].value - 1] as const) : undefined,
    );
    if (!fresh || went) {
      await Promise.all(back);
      return counted;
    }
    const won = await Promise.all(ids.map(take));
    return Promise.all(
      ids
        .filter((_, i) => won[i])
        .map(
          async (id) => [id, (await this.store.increment(callers(id), 1, ttl, EVICTABLE)).value - 1] as const,
        ),
    );
  }

  /** A caller's mark is read only in its window (the key names it): kept until the window ends, and a minute. */
  private markTtl(w: number): number {
    return (w + 1) * this.settings.windowMs - this.store.now() + MARK_SLACK_MS;
  }

  /** The mark of a caller in a subject's window. */
  private mark(id: string, of: string, w: number): string {
    return key.caller(this.keys.digest(`${id}\n${of}`), w);
  }
}
