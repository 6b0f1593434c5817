import { randomUUID } from 'node:crypto';
import type { VerificationStore } from '../store/verification-store.interface.js';
import type { ProtectionHold } from './protection-hold.js';
import { ProtectionKeys } from './protection-keys.js';
import { ProtectionRefusalReason, rateLimited } from './protection-refusals.js';

export interface CooldownClaim {
  /** When the next start to this phone will be accepted, or null when the cooldown is off. */
  availableAt: Date | null;
  /** Lifts the cooldown again (nothing was sent after all). */
  hold: ProtectionHold;
}

const NO_CLAIM: CooldownClaim = { availableAt: null, hold: { release: async () => undefined } };

/**
 * The resend cooldown per phone number: after a start, the next start to the same number (from
 * anyone, by any method) is accepted only once `resendCooldownMs` has passed on the store's
 * clock. Claimed atomically (set-if-absent), so concurrent starts to one number cannot both pass.
 * The stored value is `<availableAt>:<claim token>`.
 */
export class ResendCooldown {
  constructor(
    private readonly store: VerificationStore,
    private readonly cooldownMs: number | false,
  ) {}

  /** Whether starts claim a cooldown (a write to the store) at all. */
  get enabled(): boolean {
    return this.cooldownMs !== false;
  }

  /** Starts the cooldown for the phone, or throws 429 `resend_cooldown` while one is running. */
  async claim(phoneNumber: string): Promise<CooldownClaim> {
    if (this.cooldownMs === false) return NO_CLAIM;
    const key = ProtectionKeys.cooldown(phoneNumber);
    const token = randomUUID();
    // Two rounds cover a cooldown that ends between the failed claim and the read.
    for (let round = 0; round < 2; round++) {
      const availableAt = this.store.now() + this.cooldownMs;
      const value = `${availableAt}:${token}`;
      if (await this.store.setIfAbsent(key, value, this.cooldownMs)) {
        return { availableAt: new Date(availableAt), hold: { release: () => this.lift(key, value) } };
      }
      const stored = await this.store.get(key);
      const running = parseAvailableAt(stored);
      // The stored entry can outlive its `availableAt` by the clock ticks between computing it and
      // writing it: a cooldown whose time has come is over, whatever the entry's TTL says.
      if (running !== null && running <= this.store.now()) {
        await this.lift(key, stored!);
        continue;
      }
      if (running !== null) {
        throw rateLimited(ProtectionRefusalReason.resendCooldown, running - this.store.now(), {
          resend_available_at: new Date(running).toISOString(),
        });
      }
    }
    throw rateLimited(ProtectionRefusalReason.resendCooldown, this.cooldownMs);
  }

  /** When the running cooldown of the phone ends, or null when none runs. */
  async availableAt(phoneNumber: string): Promise<Date | null> {
    if (this.cooldownMs === false) return null;
    const running = parseAvailableAt(await this.store.get(ProtectionKeys.cooldown(phoneNumber)));
    return running === null ? null : new Date(running);
  }

  /** Removes the cooldown only while it is still the one this start claimed. */
  private async lift(key: string, value: string): Promise<void> {
    if ((await this.store.get(key)) === value) await this.store.delete(key);
  }
}

function parseAvailableAt(value: string | null): number | null {
  if (value === null) return null;
  const at = Number(value.slice(0, value.indexOf(':')));
  return Number.isFinite(at) ? at : null;
}
