import { randomUUID } from 'node:crypto';
import type { VerificationStore } from './verification-store.interface.js';
import { replaceIfEquals } from './store-replace.js';

/**
 * A key held for a while by one holder across instances (set-if-absent, with a value of its own), which a
 * crashed holder loses when its lease ends. Only its holder gives it back, and only while it is still its
 * own: a holder that outlived its lease must not free the claim another took since.
 */
export interface StoreClaim {
  readonly key: string;
  /** The value only this holder wrote. */
  readonly token: string;
  /** When the lease ends at the latest (store clock). */
  readonly until: number;
}

/** Takes `key` for `leaseMs`, its value `label` and a token of its own; null when another holds it. */
export async function takeClaim(
  store: VerificationStore,
  key: string,
  leaseMs: number,
  label = '',
): Promise<StoreClaim | null> {
  // Read before the write: the lease ends no later than this.
  const until = store.now() + leaseMs;
  const token = `${label}${randomUUID()}`;
  return (await store.setIfAbsent(key, token, leaseMs)) ? { key, token, until } : null;
}

/**
 * Gives `claim` back while its key still holds it, atomically (a host's store without `replaceIfEquals`:
 * not in the lease's last second; store-replace.ts). True when given back.
 */
export function releaseClaim(store: VerificationStore, claim: StoreClaim): Promise<boolean> {
  return replaceIfEquals(store, claim.key, claim.token, null, 1, claim.until);
}

/**
 * `claim` renewed for `leaseMs` while its key still holds it, once more than `spentMs` of its lease has passed
 * (else as it is, without a round trip): a holder about to make the call its lease guards, after work that took
 * part of it. Null when the key is another's (past its lease another took it; on a host's store without
 * replaceIfEquals, also in its last second); the store failing, the claim as it was (its lease stands).
 */
export async function renewClaim(
  store: VerificationStore,
  claim: StoreClaim,
  leaseMs: number,
  spentMs: number,
): Promise<StoreClaim | null> {
  const now = store.now();
  if (claim.until - now >= leaseMs - spentMs) return claim;
  try {
    const kept = await replaceIfEquals(store, claim.key, claim.token, claim.token, leaseMs, claim.until);
    return kept ? { ...claim, until: now + leaseMs } : null;
  } catch {
    return claim;
  }
}

/** A claim its live holder keeps while it works (keepClaim). */
export interface KeptClaim {
  /** Stops renewing, after a renewal under way has landed: the claim as last renewed, to give back or mark. */
  stop(): Promise<StoreClaim>;
}

/**
 * Keeps `claim` while its holder works: every third of `leaseMs` (real time) its lease is renewed for
 * `leaseMs` while its key still holds its token, for `maxMs` at most after it was taken. A live holder keeps
 * its key however long its work takes up to `maxMs` (a host's slow listener); one that died stops renewing
 * and loses it within a lease. A renewal that finds the key another's stops; one the store fails is tried
 * again at the next.
 */
export function keepClaim(
  store: VerificationStore,
  claim: StoreClaim,
  leaseMs: number,
  maxMs: number,
): KeptClaim {
  let current = claim;
  let renewing: Promise<void> = Promise.resolve();
  const last = claim.until - leaseMs + maxMs;
  const renew = async (): Promise<void> => {
    const now = store.now();
    const ttl = Math.min(now + leaseMs, last) - now;
    if (ttl <= 0 || now + ttl <= current.until) return clearInterval(timer);
    // renewClaim: the same compare-and-renew as a holder about to pay (0 spent: renewed whenever it lengthens).
    const kept = await renewClaim(store, current, ttl, 0);
    if (kept === null) clearInterval(timer);
    else current = kept;
  };
  const timer = setInterval(() => (renewing = renewing.then(renew)), Math.max(1, Math.floor(leaseMs / 3)));
  // A holder's work that outlives the process's other handles must not keep it alive.
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await renewing;
      return current;
    },
  };
}
