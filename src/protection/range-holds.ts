import type { DataKeys } from '../core/data-keys.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { EVICTABLE, options, rangeStatsKey as key, SHARE_VERIFIED, WEEK_MS } from './range-stats-keys.js';

/** Marks a remembered session's givers among its subjects' ids. */
const GIVER = 'giver\n';

/** A running hold: when it ends and how many holds came before it in a row. */
export interface HoldState {
  until: number;
  level: number;
}

/**
 * The pumping defence's holds in the store, shared by every instance: when each subject's hold ends
 * and how many came before it in a row; which subjects a started session belongs to, and the share
 * its verification gives back to its givers. RangeStats adds the counts.
 */
export class RangeHolds {
  constructor(
    protected readonly store: VerificationStore,
    protected readonly settings: { windowMs: number; recordTtlMs: number },
    /** Names subjects, numbers and callers in keys, and seals a session's subjects. */
    protected readonly keys: DataKeys,
  ) {}

  async readHold(id: string): Promise<HoldState | undefined> {
    const value = await this.store.get(key.hold(this.keys.digest(id)));
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
    const k = key.hold(this.keys.digest(id));
    const value = `${this.store.now() + coolOffMs}:${level}`;
    // Remembered a window past the cool-off, so a pattern that goes on gets the next, longer one.
    const ttl = coolOffMs + 2 * this.settings.windowMs;
    if (previous === undefined) return this.store.setIfAbsent(k, value, ttl, options(id));
    const current = await this.store.get(k);
    if (current !== null && current !== `${previous.until}:${previous.level}`) return false;
    await this.store.set(k, value, ttl, options(id));
    return true;
  }

  /**
   * Which subjects a started session belongs to, until it can no longer be verified, and who gave
   * its start's evidence (giversOf: their share comes back when it is verified).
   */
  async rememberSession(
    requestId: string,
    ids: string[],
    ttlMs: number,
    givers: string[] = [],
  ): Promise<void> {
    // Sealed: the ids name the caller (an owner, a client key, an address).
    const all = [...ids, ...givers.map((g) => `${GIVER}${g}`)];
    await this.store.set(key.session(requestId), this.keys.seal(JSON.stringify(all)), ttlMs, EVICTABLE);
  }

  /**
   * A session verified: the subjects of its start, once (later calls answer undefined); its givers
   * each get back its start's share and half a start more (SHARE_VERIFIED): a network of real users
   * who convert never runs out of share.
   */
  async takeSession(requestId: string): Promise<string[] | undefined> {
    const k = key.session(requestId);
    const value = await this.store.get(k);
    if (value === null) return undefined;
    await this.store.delete(k);
    let ids: unknown;
    try {
      ids = JSON.parse(this.keys.open(value) ?? '');
    } catch {
      return undefined;
    }
    if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) return undefined;
    const week = Math.floor(this.store.now() / WEEK_MS);
    const givers = ids.filter((id) => id.startsWith(GIVER)).map((id) => id.slice(GIVER.length));
    await Promise.all(
      givers.map((g) =>
        this.store.increment(key.share(this.keys.digest(g), week), -SHARE_VERIFIED, 2 * WEEK_MS, EVICTABLE),
      ),
    );
    return ids.filter((id) => !id.startsWith(GIVER));
  }
}
