import type { SandboxAccount } from './sandbox-accounts.js';

/**
 * Per-account request rate limit over fixed one-second windows of the sandbox clock. Returns undefined
 * when the request may pass (and counts it), or the `Retry-After` seconds when it may not.
 */
export function takeRateToken(account: SandboxAccount, now: number): number | undefined {
  const limit = account.rateLimitPerSecond;
  if (limit === null) return undefined;
  const windowStart = now - (now % 1000);
  if (account.rateWindowStart !== windowStart) {
    account.rateWindowStart = windowStart;
    account.rateWindowCount = 0;
  }
  if (account.rateWindowCount >= limit) return Math.max(1, Math.ceil((windowStart + 1000 - now) / 1000));
  account.rateWindowCount += 1;
  return undefined;
}
