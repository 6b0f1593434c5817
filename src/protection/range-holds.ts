import type { DataKeys } from '../core/data-keys.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { options, rangeStatsKey as key } from './range-stats-keys.js';

/** A running hold: when it ends and how many holds came before it in a row. */
export interface HoldState {
  until: number;
  level: number;
}

/**
 * The pumping defence's holds in the store, shared by every instance: when each subject's hold ends
 * and how many came before it in a row. RangeStats adds the counts.
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
}
