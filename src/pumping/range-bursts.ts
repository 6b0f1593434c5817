import { bursty, EVICTABLE, rangeStatsKey as key } from './range-stats-keys.js';
import { RangeHolds } from './range-holds.js';

/**
 * A start's marks in window `window` of its ranges and prefixes (`markBursts`): `ids`, where its number
 * and its caller were both new; `release` takes back the marks it set (a start refused in the same
 * round trip, as if never made): a hold of protection's (ProtectionHold).
 */
export interface BurstMarks {
  window: number;
  ids: ReadonlySet<string>;
  /**
   * Present where another start had the number's mark: gives back the caller marks this start took (a
   * caller is marked only where it is counted) and tries the number's mark again (a refused start gives
   * its mark back). Taken now, its callers are marked again: the ids where they were new.
   */
  retake?(): Promise<ReadonlySet<string>>;
  release(): Promise<void>;
}

/** How long a burst mark outlives its window: instances' clocks that disagree by up to this still read it. */
export const MARK_SLACK_MS = 60_000;

/**
 * The burst signature in the store: a start of a number new to a range or prefix in the window, from a
 * caller new to it, is counted there (many numbers from many addresses). One number from many
 * addresses (the per-number limits' business, and a stranger must not hold its owner's range), or many
 * numbers from one (an office: the normal minimum's), count once. A caller is marked seen in a subject
 * only where it is counted: its first start of a number already started in the window marks nothing.
 * RangeStats adds the other counts.
 */
export class RangeBursts extends RangeHolds {
  /**
   * Marks `phoneNumber` and `caller` in the current window of each range and prefix (set-if-absent):
   * where both were new, `countStart` counts the start (see BurstMarks). Taken with the request limits,
   * so that the count goes with the defence's other counts in one round trip.
   */
  async markBursts(
    subjects: readonly { id: string }[],
    phoneNumber?: string,
    caller?: string,
  ): Promise<BurstMarks> {
    const now = this.store.now();
    const w = Math.floor(now / this.settings.windowMs);
    const none = { window: w, ids: new Set<string>(), release: async () => undefined };
    const ids = subjects.filter((s) => bursty(s.id)).map((s) => s.id);
    if (caller === undefined || phoneNumber === undefined || ids.length === 0) return none;
    // A caller's mark is read only in its window (the key names it): kept until the window ends, and a
    // minute for instances whose clocks disagree.
    const ttl = (w + 1) * this.settings.windowMs - now + MARK_SLACK_MS;
    // The number's range and prefix are its own: new to one in the window is new to the other (one mark).
    // Its mark is its count of starts in the window (RangeStats.countStart), created at 0 and as long-lived:
    // absent, no start of the number was marked or counted in the window.
    const numberMark = key.number(this.keys.digest(phoneNumber), w);
    const callerMarks = ids.map((id) => this.mark(id, caller, w));
    const take = (k: string): Promise<boolean> =>
      k === numberMark
        ? this.store.setIfAbsent(k, '0', 2 * this.settings.windowMs, EVICTABLE)
        : this.store.setIfAbsent(k, '1', ttl, EVICTABLE);
    const [numberNew, ...won] = await Promise.all([numberMark, ...callerMarks].map(take));
    /** The marks this start holds (release gives them back). */
    const held = new Set([numberMark, ...callerMarks].filter((_, i) => (i === 0 ? numberNew : won[i - 1])));
    let released = false;
    const marks: BurstMarks = {
      window: w,
      ids: new Set(ids.filter((_, i) => numberNew && won[i])),
      release: async () => {
        if (released) return;
        released = true;
        await Promise.all([...held].map((k) => this.store.delete(k)));
      },
    };
    if (numberNew) return marks;
    marks.retake = async () => {
      const given = callerMarks.filter((k) => held.delete(k));
      const [again] = await Promise.all([take(numberMark), ...given.map((k) => this.store.delete(k))]);
      if (!again) return new Set<string>();
      held.add(numberMark);
      const callers = await Promise.all(callerMarks.map(take));
      callerMarks.forEach((k, i) => callers[i] && held.add(k));
      return new Set(ids.filter((_, i) => callers[i]));
    };
    return marks;
  }

  /**
   * Counts the start where its marks were both new, and answers each such subject's distinct callers
   * before it (counted atomically). Without marks of window `w` (none taken, or the window rolled over
   * since), marks them first; where another start had the number's mark, retakes them (BurstMarks).
   */
  protected async countBursts(
    subjects: readonly { id: string }[],
    w: number,
    phoneNumber: string | undefined,
    caller: string | undefined,
    marked: BurstMarks | undefined,
  ): Promise<(readonly [string, number] | undefined)[]> {
    const marks = marked?.window === w ? marked : await this.markBursts(subjects, phoneNumber, caller);
    if (marks.window !== w) return [];
    const ids = marks.retake ? await marks.retake() : marks.ids;
    const ttl = 2 * this.settings.windowMs;
    return Promise.all(
      [...ids].map(async (id) => {
        const counted = await this.store.increment(key.callers(this.keys.digest(id), w), 1, ttl, EVICTABLE);
        return [id, counted.value - 1] as const;
      }),
    );
  }

  /** The mark of a caller in a subject's window. */
  private mark(id: string, of: string, w: number): string {
    return key.caller(this.keys.digest(`${id}\n${of}`), w);
  }
}
