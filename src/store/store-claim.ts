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
