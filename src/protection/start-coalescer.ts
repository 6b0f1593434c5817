import { randomUUID } from 'node:crypto';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { protectionRefusal, ProtectionRefusalReason } from './protection-refusals.js';
import type { ProtectedStart, StartedSession } from './verification-protection.types.js';

export interface StartCoalescerSettings {
  /** How long a start may hold the claim (hook + limits + the upstream call); a crashed holder's claim ends then. */
  claimTtlMs: number;
}

const CLAIM = 'claim:';
const SESSION = 'session:';

/**
 * Duplicate-start coalescing: the same caller + phone + method gets the session its first start
 * created instead of a new paid initiation, while that session is pending and its resend
 * cooldown runs (after the cooldown, a start is a deliberate resend).
 *
 * In one process, identical concurrent starts share one flight (a map of promises). Across
 * instances, the first start claims the key in the store (set-if-absent); the others wait for the
 * claim to turn into the session's request id and resume it. When the first start fails, its
 * claim is removed and a waiting start tries on its own.
 */
export class StartCoalescer {
  private readonly inflight = new Map<string, Promise<ProtectedStart<StartedSession>>>();

  constructor(
    private readonly store: VerificationStore,
    private readonly settings: StartCoalescerSettings,
  ) {}

  async run<T extends StartedSession>(
    key: string,
    fresh: () => Promise<ProtectedStart<T>>,
    resume: (requestId: string) => Promise<T | null>,
    handBack: (result: T) => Promise<ProtectedStart<T>>,
  ): Promise<ProtectedStart<T>> {
    const running = this.inflight.get(key) as Promise<ProtectedStart<T>> | undefined;
    if (running) return { ...(await running), coalesced: true };
    const flight = this.acquire(key, fresh, resume, handBack).finally(() => this.inflight.delete(key));
    this.inflight.set(key, flight);
    return flight;
  }

  private async acquire<T extends StartedSession>(
    key: string,
    fresh: () => Promise<ProtectedStart<T>>,
    resume: (requestId: string) => Promise<T | null>,
    handBack: (result: T) => Promise<ProtectedStart<T>>,
  ): Promise<ProtectedStart<T>> {
    // Waiting is real time: it waits for another instance's HTTP call, not for a TTL.
    const deadline = Date.now() + this.settings.claimTtlMs + 1000;
    let pause = 10;
    for (;;) {
      if (Date.now() > deadline)
        throw protectionRefusal(ProtectionRefusalReason.startInProgress, this.settings.claimTtlMs);
      // Claim first: a new start (the usual case) takes one store round trip, a duplicate two.
      const claim = CLAIM + randomUUID();
      if (await this.store.setIfAbsent(key, claim, this.settings.claimTtlMs))
        return this.startAsClaimHolder(key, claim, fresh);
      const current = await this.store.get(key);
      if (current === null) continue; // Ended between the two calls: claim again.
      if (current.startsWith(SESSION)) {
        const result = await resume(current.slice(SESSION.length));
        if (result) return handBack(result);
        // Ended or expired: no longer something to hand back.
        await this.deleteIf(key, current);
        continue;
      }
      await sleep(pause);
      pause = Math.min(pause * 2, 100);
    }
  }

  private async startAsClaimHolder<T extends StartedSession>(
    key: string,
    claim: string,
    fresh: () => Promise<ProtectedStart<T>>,
  ): Promise<ProtectedStart<T>> {
    let outcome: ProtectedStart<T>;
    try {
      outcome = await fresh();
    } catch (error) {
      await this.deleteIf(key, claim).catch(() => undefined);
      throw error;
    }
    // Handed back until a resend is allowed (the cooldown's end) and never past the session's expiry.
    const until = Math.min(
      outcome.result.expiresAt,
      outcome.resendAvailableAt?.getTime() ?? outcome.result.expiresAt,
    );
    const ttl = until - this.store.now();
    try {
      if (ttl > 0) await this.store.set(key, SESSION + outcome.result.requestId, ttl);
      else await this.deleteIf(key, claim);
    } catch {
      // The session was started and paid for: serve it. Duplicates wait out the claim's TTL.
    }
    return outcome;
  }

  /** Removes the key while it still holds `value` (a claim or session of this flight). */
  private async deleteIf(key: string, value: string): Promise<void> {
    if ((await this.store.get(key)) === value) await this.store.delete(key);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
