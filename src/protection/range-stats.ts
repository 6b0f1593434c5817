import { DAY_MS } from '../core/clock.js';
import type { StoreWriteOptions, VerificationStore } from '../store/verification-store.interface.js';
import { digest } from './protection-keys.js';
import { slidingCount, type SubjectCounts } from './pumping-rules.js';

/** Anyone can make the defence create one of these per range or caller: a bounded store may evict them among themselves. */
const EVICTABLE: StoreWriteOptions = { evictable: true };

/** A subject the defence counts: `range:+7916123`, `country:RU`, `owner:…`, `client:…`, `network:…`. */
export interface StatsSubject {
  id: string;
  /** Ranges and countries keep a day counter: their normal rate. */
  withBaseline: boolean;
}

/** A running hold: when it ends and how many holds came before it in a row. */
export interface HoldState {
  until: number;
  level: number;
}

const key = {
  starts: (id: string, w: number) => `protect:pump:s:${digest(id)}:${w}`,
  verified: (id: string, w: number) => `protect:pump:v:${digest(id)}:${w}`,
  day: (id: string, d: number) => `protect:pump:d:${digest(id)}:${d}`,
  known: (id: string) => `protect:pump:known:${digest(id)}`,
  hold: (id: string) => `protect:pump:hold:${digest(id)}`,
  number: (e164: string, w: number) => `protect:pump:n:${digest(e164)}:${w}`,
  session: (requestId: string) => `protect:pump:session:${digest(requestId)}`,
};

/**
 * The pumping defence's counts in the store, shared by every instance: starts and verifications per
 * subject in two fixed windows (read as one sliding window), a day counter of starts for ranges and
 * countries (their normal rate), a record of completed verifications, holds, and which subjects a
 * started session belongs to (so its verification is counted where its start was). Everything but
 * the country counters is written evictable: one exists per range or caller, and a flood of them must
 * not evict sessions, cooldowns or per-phone limits from a bounded store.
 */
export class RangeStats {
  constructor(
    private readonly store: VerificationStore,
    private readonly settings: { windowMs: number; recordTtlMs: number },
  ) {}

  /**
   * Each subject's counts in the sliding window ending now, read at once. Ranges and countries count
   * numbers, not starts (see countStart): when `phoneNumber` was already counted in the window, it is
   * taken out of theirs, so that a number's own earlier starts never hold its range.
   */
  async read(subjects: StatsSubject[], phoneNumber: string): Promise<Map<string, SubjectCounts>> {
    const now = this.store.now();
    const { windowMs } = this.settings;
    const w = Math.floor(now / windowMs);
    const elapsed = (now - w * windowMs) / windowMs;
    const day = Math.floor(now / DAY_MS);
    const number = async (k: string): Promise<number> => {
      const n = Number(await this.store.get(k));
      return Number.isFinite(n) && n > 0 ? n : 0;
    };
    const seen = Promise.all([
      this.store.get(key.number(phoneNumber, w)),
      this.store.get(key.number(phoneNumber, w - 1)),
    ]).then(([current, previous]) => current !== null || previous !== null);
    const rows = await Promise.all(
      subjects.map(async (s) => {
        const [sc, sp, vc, vp, previousDay, known] = await Promise.all([
          number(key.starts(s.id, w)),
          number(key.starts(s.id, w - 1)),
          number(key.verified(s.id, w)),
          number(key.verified(s.id, w - 1)),
          s.withBaseline ? number(key.day(s.id, day - 1)) : Promise.resolve(0),
          this.store.get(key.known(s.id)),
        ]);
        const own = s.withBaseline && (await seen) ? 1 : 0;
        const counts: SubjectCounts = {
          starts: Math.max(0, slidingCount(sc, sp, elapsed) - own),
          verified: slidingCount(vc, vp, elapsed),
          known: known !== null,
        };
        if (s.withBaseline) counts.baseline = (previousDay * windowMs) / DAY_MS;
        return [s.id, counts] as const;
      }),
    );
    return new Map(rows);
  }

  /**
   * Counts a start for each subject; the returned function takes it back (the start did not go
   * ahead). Ranges and countries count a number once per window (repeated starts of one number are
   * the per-number limits' business; pumping goes to many numbers). Without a number, every given
   * subject is counted (a held start's pressure on its country).
   */
  async countStart(subjects: StatsSubject[], phoneNumber: string | undefined): Promise<() => Promise<void>> {
    const w = Math.floor(this.store.now() / this.settings.windowMs);
    const marker = phoneNumber === undefined ? undefined : key.number(phoneNumber, w);
    const firstOfNumber =
      marker === undefined ||
      (await this.store.setIfAbsent(marker, '1', 2 * this.settings.windowMs, EVICTABLE));
    const writes = this.startKeys(firstOfNumber ? subjects : subjects.filter((s) => !s.withBaseline));
    await Promise.all(writes.map(([k, ttl, options]) => this.store.increment(k, 1, ttl, options)));
    return async () => {
      await Promise.all(writes.map(([k, ttl, options]) => this.store.increment(k, -1, ttl, options)));
      if (marker !== undefined && firstOfNumber) await this.store.delete(marker);
    };
  }

  /** Counts a completed verification for each subject and records them as known. */
  async countVerified(ids: string[]): Promise<void> {
    const now = this.store.now();
    const w = Math.floor(now / this.settings.windowMs);
    await Promise.all(
      ids.flatMap((id) => [
        this.store.increment(key.verified(id, w), 1, 2 * this.settings.windowMs, options(id)),
        this.store.set(key.known(id), '1', this.settings.recordTtlMs, options(id)),
      ]),
    );
  }

  async readHold(id: string): Promise<HoldState | undefined> {
    const value = await this.store.get(key.hold(id));
    if (value === null) return undefined;
    const [until, level] = value.split(':').map(Number);
    return Number.isFinite(until) && Number.isFinite(level) ? { until: until!, level: level! } : undefined;
  }

  /**
   * Starts a hold of `coolOffMs` at `level`, unless another request (or instance) started one since
   * `previous` was read. True when this call started it (it then reports it, once).
   */
  async startHold(
    id: string,
    previous: HoldState | undefined,
    level: number,
    coolOffMs: number,
  ): Promise<boolean> {
    const k = key.hold(id);
    const value = `${this.store.now() + coolOffMs}:${level}`;
    // Remembered a window past the cool-off, so a pattern that goes on gets the next, longer one.
    const ttl = coolOffMs + 2 * this.settings.windowMs;
    if (previous === undefined) return this.store.setIfAbsent(k, value, ttl, options(id));
    const current = await this.store.get(k);
    if (current !== null && current !== `${previous.until}:${previous.level}`) return false;
    await this.store.set(k, value, ttl, options(id));
    return true;
  }

  /** Which subjects a started session belongs to, until it can no longer be verified. */
  async rememberSession(requestId: string, ids: string[], ttlMs: number): Promise<void> {
    await this.store.set(key.session(requestId), JSON.stringify(ids), ttlMs, EVICTABLE);
  }

  /** The subjects of a session's start, once (later calls answer undefined). */
  async takeSession(requestId: string): Promise<string[] | undefined> {
    const k = key.session(requestId);
    const value = await this.store.get(k);
    if (value === null) return undefined;
    await this.store.delete(k);
    try {
      const ids: unknown = JSON.parse(value);
      return Array.isArray(ids) && ids.every((id) => typeof id === 'string') ? ids : undefined;
    } catch {
      return undefined;
    }
  }

  private startKeys(subjects: StatsSubject[]): [string, number, StoreWriteOptions | undefined][] {
    const now = this.store.now();
    const w = Math.floor(now / this.settings.windowMs);
    const day = Math.floor(now / DAY_MS);
    return subjects.flatMap((s) => {
      const writes: [string, number, StoreWriteOptions | undefined][] = [
        [key.starts(s.id, w), 2 * this.settings.windowMs, options(s.id)],
      ];
      if (s.withBaseline) writes.push([key.day(s.id, day), 2 * DAY_MS, options(s.id)]);
      return writes;
    });
  }
}

/** Country counters are few (one per country): kept. Every other subject's entries are evictable. */
function options(id: string): StoreWriteOptions | undefined {
  return id.startsWith('country:') ? undefined : EVICTABLE;
}
