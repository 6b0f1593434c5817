import { randomBytes } from 'node:crypto';
import type { VerificationStore } from '../store/verification-store.interface.js';
import type { ProtectionHold } from './protection-hold.js';
import type { DataKeys } from '../core/data-keys.js';
import { ProtectionKeys } from './protection-keys.js';
import { limitsCallerOf, starterOf } from './start-callers.js';
import type { CoalescingClaim, StartCoalescer } from './start-coalescer.js';
import type { HandBack, StartCandidate } from './verification-protection.types.js';
import { coarseWaitMs, ProtectionRefusalReason, protectionRefusal } from '../core/refusal-reason.js';

export interface CooldownClaim {
  /** When the caller's next start to this phone will be accepted, or null when the cooldown is off. */
  availableAt: Date | null;
  /** Lifts the cooldown again (nothing was sent after all). */
  hold: ProtectionHold;
}

/** Who asks: the limits' caller (owner, else client key) and who started it, when known. */
export interface CooldownCaller {
  caller: string;
  /** The owner or the browser key: a caller who can show it is the one who started. */
  starter: string | undefined;
}

const NO_CLAIM: CooldownClaim = { availableAt: null, hold: { release: async () => undefined } };

/**
 * The resend cooldown per phone number, method and caller (the owner when `owner()` answers, else
 * the client key): after a start, the same caller's next start to the same number by the same
 * method is accepted only once `resendCooldownMs` has passed on the store's clock. Another method
 * is not a resend (a journey switching from SMS to a call must not wait out the SMS's cooldown);
 * the per-number limits bound how many methods one caller can try. Another caller is not held
 * back by it (the per-number ceiling bounds what all callers together send): a stranger's start
 * must not keep the number's owner waiting. Claimed atomically (set-if-absent), so concurrent
 * starts of one caller cannot both pass.
 *
 * The stored value is `<availableAt>:<claim token>:<starter digest>`. A refused caller who is not
 * the starter (another browser behind the same IP) gets no `resend_available_at` and a coarse
 * `Retry-After`: the exact time would say when someone else's verification started.
 */
export class ResendCooldown {
  constructor(
    private readonly store: VerificationStore,
    private readonly cooldownMs: number | false,
    private readonly keys: DataKeys,
    /** Coalescing (`limits.coalesceStarts`; off: undefined): see `coalesce`. */
    private readonly coalescer?: StartCoalescer,
  ) {}

  /**
   * Coalescing: the pending session of an identical start (same starter, number, method and purpose)
   * is handed back while its cooldown runs, with the cooldown's end; else the start gets the claim to
   * start one (StartCoalescer.claim). Undefined when coalescing is off or the starter is unknown.
   */
  async coalesce(candidate: StartCandidate, stale?: string): Promise<HandBack | CoalescingClaim | undefined> {
    const starter = starterOf(candidate);
    if (this.coalescer === undefined || starter === undefined) return undefined;
    const { phoneNumber, method, purpose } = candidate;
    const key = ProtectionKeys.coalesce(this.keys, starter, phoneNumber, method, purpose);
    const claimed = await this.coalescer.claim(key, stale);
    if (typeof claimed !== 'string') return claimed;
    const resendAvailableAt = await this.availableAt(phoneNumber, method, limitsCallerOf(candidate));
    return { handBack: claimed, resendAvailableAt };
  }

  /** Starts the cooldown for the caller, phone and method, or throws 429 `resend_cooldown` while one is running. */
  async claim(phoneNumber: string, method: string, who: CooldownCaller): Promise<CooldownClaim> {
    if (this.cooldownMs === false) return NO_CLAIM;
    const key = ProtectionKeys.cooldown(this.keys, who.caller, phoneNumber, method);
    // 72 random bits: it tells this hold from the next one of the same key (a release compares it).
    const token = randomBytes(9).toString('base64url');
    const starter = who.starter === undefined ? '' : this.keys.digest(who.starter);
    // Two rounds cover a cooldown that ends between the failed claim and the read.
    for (let round = 0; round < 2; round++) {
      const availableAt = this.store.now() + this.cooldownMs;
      const value = `${availableAt}:${token}:${starter}`;
      if (await this.store.setIfAbsent(key, value, this.cooldownMs)) {
        return { availableAt: new Date(availableAt), hold: { release: () => this.lift(key, value) } };
      }
      const stored = await this.store.get(key);
      const running = parseCooldown(stored);
      // The stored entry can outlive its `availableAt` by the clock ticks between computing it and
      // writing it: a cooldown whose time has come is over, whatever the entry's TTL says.
      if (running !== null && running.availableAt <= this.store.now()) {
        await this.lift(key, stored!);
        continue;
      }
      if (running !== null) throw this.refusal(running, starter);
    }
    throw protectionRefusal(ProtectionRefusalReason.resendCooldown, this.cooldownMs);
  }

  /** When the caller's running cooldown for the phone and method ends, or null when none runs. */
  async availableAt(phoneNumber: string, method: string, caller: string): Promise<Date | null> {
    if (this.cooldownMs === false) return null;
    const running = parseCooldown(
      await this.store.get(ProtectionKeys.cooldown(this.keys, caller, phoneNumber, method)),
    );
    return running === null ? null : new Date(running.availableAt);
  }

  private refusal(running: RunningCooldown, starter: string) {
    const waitMs = running.availableAt - this.store.now();
    if (starter !== '' && running.starter === starter)
      return protectionRefusal(ProtectionRefusalReason.resendCooldown, waitMs, {
        resend_available_at: new Date(running.availableAt).toISOString(),
      });
    return protectionRefusal(
      ProtectionRefusalReason.resendCooldown,
      coarseWaitMs(waitMs, this.cooldownMs as number),
    );
  }

  /** Removes the cooldown only while it is still the one this start claimed. */
  private async lift(key: string, value: string): Promise<void> {
    if ((await this.store.get(key)) === value) await this.store.delete(key);
  }
}

interface RunningCooldown {
  availableAt: number;
  /** Digest of who started it, '' when unknown. */
  starter: string;
}

function parseCooldown(value: string | null): RunningCooldown | null {
  if (value === null) return null;
  const [at, , starter] = value.split(':');
  const availableAt = Number(at);
  return Number.isFinite(availableAt) ? { availableAt, starter: starter ?? '' } : null;
}
