import type { VerificationStore } from '../store/verification-store.interface.js';
import { replaceIfEquals } from '../store/store-replace.js';
import { renewClaim, takeClaim } from '../store/store-claim.js';
import { protectionRefusal, ProtectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';
import type { StartedSession } from './verification-protection.types.js';

export interface StartCoalescerSettings {
  /** How long a start may hold the claim (hook + limits + the upstream call); a crashed holder's claim ends then. */
  claimTtlMs: number;
  /**
   * Just before its POST, a start whose claim has less than this left renews it for `claimTtlMs` (the admission
   * took long: the host's hooks, the spend cap's API reads). Default: half the claim's life.
   */
  renewBelowMs?: number;
}

const CLAIM = 'claim:';
const SESSION = 'session:';

/**
 * One start's flight in this process: identical starts wait on its outcome (a request id, or the
 * failure). Settled, it leaves the process's map. Its promise is made for the first start that waits:
 * most starts have no twin in flight.
 */
class Flight {
  #waited?: { outcome: Promise<string>; resolve(requestId: string): void; reject(error: unknown): void };
  /** When it began (real time, as the waits): past the claim's life, its claim in the store has ended. */
  readonly began = Date.now();

  constructor(
    private readonly flights: Map<string, Flight>,
    private readonly key: string,
  ) {}

  get outcome(): Promise<string> {
    if (this.#waited === undefined) {
      let resolve!: (requestId: string) => void;
      let reject!: (error: unknown) => void;
      const outcome = new Promise<string>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      // A failure its waiters stopped awaiting is not an unhandled rejection.
      outcome.catch(() => undefined);
      this.#waited = { outcome, resolve, reject };
    }
    return this.#waited.outcome;
  }

  resolve(requestId: string): void {
    this.#leave();
    this.#waited?.resolve(requestId);
  }

  reject(error: unknown): void {
    this.#leave();
    this.#waited?.reject(error);
  }

  /** A flight that outlived its claim was replaced: the key's flight is no longer this one. */
  #leave(): void {
    if (this.flights.get(this.key) === this) this.flights.delete(this.key);
  }
}

/**
 * The right to start the session of one coalescing key: held by the start that claimed it, until
 * that start settles it with the session it created (handed back to identical starts until `until`)
 * or with its failure (shared with the identical starts of this process that waited on it).
 * Settling never throws, and only the first settlement counts.
 */
export class CoalescingClaim {
  private settled = false;

  constructor(
    private readonly coalescer: StartCoalescer,
    readonly key: string,
    private readonly value: string,
    /** When the claim ends in the store (store-clock ms); renewed just before the start's POST (`renew`). */
    private until: number,
    private readonly flight: Flight,
    /** Won after waiting for another start's claim: what was read before it may be out of date. */
    readonly contested = false,
  ) {}

  /**
   * Just before the start's POST: the claim renewed for its whole lease, so that it outlasts the call whatever
   * the admission took before it (the host's hooks, the spend cap's reads of prices and usage, each an API call
   * of its own). Throws 503 `start_in_progress` when the claim is no longer this start's: past its lease another
   * start took it, and pays; this one must not pay too. The store failing: the claim stands as it was.
   */
  async renew(): Promise<void> {
    if (this.settled) return;
    const until = await this.coalescer.renew(this.key, this.value, this.until);
    if (until === null) throw this.coalescer.inProgress();
    this.until = until;
  }

  async started(session: StartedSession, resendAvailableAt: Date | null): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.flight.resolve(session.requestId);
    // Handed back until a resend is allowed (the cooldown's end) and never past the session's expiry.
    const until = Math.min(session.expiresAt, resendAvailableAt?.getTime() ?? session.expiresAt);
    await this.coalescer.keep(this.key, { value: this.value, until: this.until }, session.requestId, until);
  }

  async failed(error: unknown): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.flight.reject(error);
    await this.coalescer.drop(this.key, this.value, this.until);
  }
}

/**
 * Duplicate-start coalescing: the same caller + phone + method gets the session its first start
 * created instead of a new paid initiation, while that session is pending and its resend
 * cooldown runs (after the cooldown, a start is a deliberate resend).
 *
 * In one process, identical concurrent starts wait for one flight's outcome, as long as one of another
 * instance would wait (the claim's life and a second). Across instances, the
 * first start claims the key in the store (set-if-absent); the others wait for the claim to turn
 * into the session's request id and resume it. When the first start fails, its claim is removed and
 * a waiting start of another instance tries on its own. `claim` gives a request id to hand back or a
 * CoalescingClaim its holder settles; `admit` runs the start's own admission under that claim (a real
 * start's or a test number's, see VerificationProtection).
 */
export class StartCoalescer {
  private readonly flights = new Map<string, Flight>();
  /** How long a duplicate waits for the first start's outcome: the claim's life and a second. */
  private readonly maxWaitMs: number;

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: StartCoalescerSettings,
  ) {
    this.maxWaitMs = settings.claimTtlMs + 1000;
  }

  /**
   * A pending session's request id to hand back, or the claim to start one. `stale`: a request id
   * this key handed back whose session the caller found ended (it is no longer handed back).
   */
  async claim(key: string, stale?: string): Promise<string | CoalescingClaim> {
    if (stale !== undefined) await this.drop(key, SESSION + stale);
    const running = this.flights.get(key);
    // One whose claim ended (a holder that never settles) is not waited on: this start tries on its own, as one
    // of another instance does.
    if (running && Date.now() - running.began < this.settings.claimTtlMs) return this.waitFor(running);
    const flight = new Flight(this.flights, key);
    this.flights.set(key, flight);
    try {
      const claimed = await this.acquire(key, flight);
      if (typeof claimed === 'string') flight.resolve(claimed);
      return claimed;
    } catch (error) {
      flight.reject(error);
      throw error;
    }
  }

  /** An identical start of this process waits as one of another instance does: the claim's life and a second. */
  private waitFor(running: Flight): Promise<string> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(this.inProgress()), this.maxWaitMs);
      // A start whose holder never settles (a host's hook that hangs) must not keep the process alive.
      timer.unref();
    });
    return Promise.race([running.outcome, late]).finally(() => clearTimeout(timer));
  }

  /** The refusal of a start whose identical start is under way (503 `start_in_progress`, Retry-After the claim's life). */
  inProgress(): ProtectionRefusal {
    return protectionRefusal(ProtectionRefusalReason.startInProgress, this.settings.claimTtlMs);
  }

  private async acquire(key: string, flight: Flight): Promise<string | CoalescingClaim> {
    // Waiting is real time: it waits for another instance's HTTP call, not for a TTL.
    const deadline = Date.now() + this.maxWaitMs;
    let pause = 10;
    for (let attempt = 0; ; attempt++) {
      if (Date.now() > deadline) throw this.inProgress();
      // Claim first: a new start (the usual case) takes one store round trip, a duplicate two.
      const claim = await takeClaim(this.store, key, this.settings.claimTtlMs, CLAIM);
      if (claim) return new CoalescingClaim(this, key, claim.token, claim.until, flight, attempt > 0);
      const current = await this.store.get(key);
      if (current === null) continue; // Ended between the two calls: claim again.
      if (current.startsWith(SESSION)) return current.slice(SESSION.length);
      await sleep(pause);
      pause = Math.min(pause * 2, 100);
    }
  }

  /**
   * The claim `value` renewed for the claim's whole life while the key still holds it, when less than
   * `renewBelowMs` of it is left: when it now ends (store clock), null when the key is another's (or, on a host's store without replaceIfEquals, in its last second);
   * the store failing, `until` (it stands as it was).
   */
  async renew(key: string, value: string, until: number): Promise<number | null> {
    const ttl = this.settings.claimTtlMs;
    // Enough left for the call and what follows it: no round trip (the usual start).
    const spentMs = ttl - (this.settings.renewBelowMs ?? ttl / 2);
    return (await renewClaim(this.store, { key, token: value, until }, ttl, spentMs))?.until ?? null;
  }

  /**
   * The claim turns into the session, handed back until `until` (ms since the epoch). Only over this start's own
   * claim, or where the key is free: past the claim's life another start may hold it, and that claim stands.
   */
  async keep(
    key: string,
    claim: { value: string; until: number },
    requestId: string,
    until: number,
  ): Promise<void> {
    const ttl = until - this.store.now();
    try {
      if (ttl <= 0) return await this.drop(key, claim.value, claim.until);
      if (!(await replaceIfEquals(this.store, key, claim.value, SESSION + requestId, ttl, claim.until)))
        await this.store.setIfAbsent(key, SESSION + requestId, ttl);
    } catch {
      // The session was started and paid for: serve it. Duplicates wait out the claim's TTL.
    }
  }

  /**
   * Removes the key while it still holds `value` (a claim or session of this flight; `until`: when it ends in the
   * store, if known); never throws.
   */
  async drop(key: string, value: string, until?: number): Promise<void> {
    try {
      await replaceIfEquals(this.store, key, value, null, 1, until);
    } catch {
      // The claim ends on its TTL.
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
