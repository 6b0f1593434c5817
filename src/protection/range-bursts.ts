import { bursty, EVICTABLE, rangeStatsKey as key } from './range-stats-keys.js';
import { RangeHolds } from './range-holds.js';

/**
 * The ranges and prefixes where a start would be new (its number and its caller both new there in the
 * window), read before it is counted: `countBursts` then counts them with its marks (one round trip).
 */
export interface BurstForecast {
  window: number;
  ids: ReadonlySet<string>;
}

/**
 * The burst signature in the store: a start of a number new to a range or prefix in the window, from a
 * caller new to it, is counted there (many numbers from many addresses). One number from many
 * addresses (the per-number limits' business, and a stranger must not hold its owner's range), or many
 * numbers from one (an office: the normal minimum's), count once. RangeStats adds the other counts.
 */
export class RangeBursts extends RangeHolds {
  /** Where a start of `phoneNumber` by `caller` would count as new (see BurstForecast): its marks read. */
  async forecastBursts(
    subjects: readonly { id: string }[],
    phoneNumber?: string,
    caller?: string,
  ): Promise<BurstForecast> {
    const w = Math.floor(this.store.now() / this.settings.windowMs);
    if (caller === undefined || phoneNumber === undefined) return { window: w, ids: new Set() };
    const burst = subjects.filter((s) => bursty(s.id));
    const marks = await Promise.all(
      burst.map((s) =>
        Promise.all([
          this.store.get(this.mark(s.id, `n:${phoneNumber}`, w)),
          this.store.get(this.mark(s.id, caller, w)),
        ]),
      ),
    );
    return {
      window: w,
      ids: new Set(burst.filter((_, i) => marks[i]!.every((m) => m === null)).map((s) => s.id)),
    };
  }

  /**
   * Marks the number and the caller in window `w` of each range and prefix, and counts the start where
   * both are new; answers each such subject's distinct callers before it (counted atomically). Where
   * `forecast` read it new, the count goes with the marks (one round trip) and is given back if a
   * concurrent start took a mark meanwhile.
   */
  protected countBursts(
    subjects: readonly { id: string }[],
    w: number,
    phoneNumber: string | undefined,
    caller: string | undefined,
    forecast: BurstForecast | undefined,
  ): Promise<(readonly [string, number] | undefined)[]> {
    if (caller === undefined || phoneNumber === undefined) return Promise.resolve([]);
    const ttl = 2 * this.settings.windowMs;
    return Promise.all(
      subjects
        .filter((s) => bursty(s.id))
        .map(async (s) => {
          const callers = key.callers(this.keys.digest(s.id), w);
          const early =
            forecast?.window === w && forecast.ids.has(s.id)
              ? this.store.increment(callers, 1, ttl, EVICTABLE)
              : undefined;
          early?.catch(() => undefined);
          const [newNumber, newCaller] = await Promise.all([
            this.store.setIfAbsent(this.mark(s.id, `n:${phoneNumber}`, w), '1', ttl, EVICTABLE),
            this.store.setIfAbsent(this.mark(s.id, caller, w), '1', ttl, EVICTABLE),
          ]);
          if (!newNumber || !newCaller) {
            if (early) {
              await early;
              await this.store.increment(callers, -1, ttl, EVICTABLE);
            }
            return undefined;
          }
          const counted = await (early ?? this.store.increment(callers, 1, ttl, EVICTABLE));
          return [s.id, counted.value - 1] as const;
        }),
    );
  }

  /** The mark of a number (`n:<E.164>`) or a caller in a subject's window. */
  private mark(id: string, of: string, w: number): string {
    return key.caller(this.keys.digest(`${id}\n${of}`), w);
  }
}
