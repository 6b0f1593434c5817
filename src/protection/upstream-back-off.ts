import type { VerificationStore } from '../store/verification-store.interface.js';
import { ProtectionKeys } from './protection-keys.js';
import { protectionRefusal, ProtectionRefusalReason } from '../core/refusal-reason.js';

/**
 * The API's own rate limit, shared by every instance: once a start is answered 429, starts wait out
 * its `Retry-After` here (429 `upstream_rate_limit`, nothing sent) instead of being forwarded into a
 * full account rate, where they would only lengthen the wait of every user.
 */
export class UpstreamBackOff {
  constructor(private readonly store: VerificationStore) {}

  /** The API answered 429 with `retryAfterMs`: starts wait until then (a later end is never shortened). */
  async hold(retryAfterMs: number): Promise<void> {
    const ms = Math.max(1, retryAfterMs);
    const until = this.store.now() + ms;
    if (until <= (await this.until())) return;
    await this.store.set(ProtectionKeys.apiBackoff, String(until), ms);
  }

  /** Throws 429 `upstream_rate_limit` while a back-off runs. */
  async assertOpen(): Promise<void> {
    const wait = (await this.until()) - this.store.now();
    if (wait > 0) throw protectionRefusal(ProtectionRefusalReason.upstreamRateLimit, wait);
  }

  private async until(): Promise<number> {
    const value = Number(await this.store.get(ProtectionKeys.apiBackoff));
    return Number.isFinite(value) ? value : 0;
  }
}
