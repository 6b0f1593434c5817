import { DataKeys } from '../core/data-keys.js';
import { digest } from '../core/digest.js';

export { digest };

/** A spend window's key part for one API account (`scope`: SpendAccount's; none: the window alone). */
function scoped(window: string, scope: string | undefined): string {
  return scope === undefined ? window : `${window}:${scope}`;
}

/**
 * Store keys of protection. Caller-derived parts (IPs, host keys such as user ids, phone
 * numbers) are digested with the data key (`DataKeys.digest`): keys stay short whatever the host's
 * key function returns, and the store's key space does not list who called or which numbers were
 * verified, nor lets anyone without the key test a guess. Request ids name no one (`digest`).
 */
export const ProtectionKeys = {
  startPerClient: 'protect:start-client',
  startPerPhone: 'protect:start-phone',
  startPerPhoneAndCaller: 'protect:start-phone-caller',
  freeStartPerCaller: 'protect:free-start-caller',
  /** The API answered 429: every instance waits out its `Retry-After`. */
  apiBackoff: 'protect:api-backoff',
  checkPerClient: 'protect:check-client',
  wrongCodesPerPhone: 'protect:wrong-codes-phone',
  wrongCodesPerOwner: 'protect:wrong-codes-owner',
  spend: 'protect:spend',
  /** Per caller, number and method: another method is not a resend (a journey's switch). */
  cooldown: (keys: DataKeys, caller: string, phone: string, method: string): string =>
    `protect:cooldown:${keys.digest(`${caller}\n${phone}\n${method}`)}`,
  /** Per caller, number, method and purpose (none: the key of a start without one). */
  coalesce: (keys: DataKeys, caller: string, phone: string, method: string, purpose?: string): string =>
    `protect:coalesce:${keys.digest(`${caller}\n${phone}\n${method}${purpose === undefined ? '' : `\n${purpose}`}`)}`,
  /** A purpose's own starts per number (`purposes[name].limits.startPerPhone`): the limiter's prefix. */
  startPerPurpose: 'protect:start-purpose',
  spendCapEvent: (window: string): string => `protect:spend-cap-event:${window}`,
  /** A caller's upstream status reads (StatusReadMeter); `:refresh` appended: its refreshes. */
  statusReads: (keys: DataKeys, caller: string): string => `status-reads:{${keys.digest(caller)}}`,
  /** An owner's last change of phone (PhoneChange's cooldown). */
  phoneChangeCooldown: (keys: DataKeys, owner: string): string => `phone-change:{${keys.digest(owner)}}`,
  /** A session's spend reservation kept open until the session ends (charged on proof or delivery). */
  spendOpen: (requestId: string): string => `protect:spend-open:${digest(requestId)}`,
  /** A free start's points and their windows' end, for its session's proof to give back (RequestRateLimits). */
  freeStartProof: (requestId: string): string => `protect:free-start-proof:${digest(requestId)}`,
  /** Claimed by the one caller that acts on a session's end (`SpendCap.ended`). */
  spendEnded: (requestId: string): string => `protect:spend-ended:${digest(requestId)}`,
  /**
   * The spend figures' scope of one API account: its key digested under a key derived from its secret (never the
   * host's `dataKey`, which registrations on one account may each set), so the registrations on one account,
   * whatever their names and data keys, count and reconcile together; another account's, on the same pooled
   * cap, apart; and a store dump cannot be checked against a guessed API key.
   */
  spendAccount: (api: { apiKey: string; apiSecret: string }): string =>
    new DataKeys(undefined, api.apiSecret).digest(`spend-account\n${api.apiKey}`),
  /**
   * A window's reservations of sessions still open, and of ended ones nothing showed charged (SpendEvidence),
   * per API account (`scope`, spendAccount): each is reconciled with that account's usage.
   */
  spendLive: (window: string, scope?: string): string => `protect:spend-live:${scoped(window, scope)}`,
  spendUnproven: (window: string, scope?: string): string =>
    `protect:spend-unproven:${scoped(window, scope)}`,
  /** What one account's registrations counted in the window's counter (which registrations sharing a store pool). */
  spendOwn: (window: string, scope?: string): string => `protect:spend-own:${scoped(window, scope)}`,
  /** A caller's proofs of methods charged on proof counted in a window (the proof reserve's share). */
  spendCaller: (window: string, caller: string): string => `protect:spend-caller:${window}:${digest(caller)}`,
  /** Claimed by the one caller that reads the window's usage (at most every 30 s). */
  spendUsage: (window: string, scope?: string): string => `protect:spend-usage:${scoped(window, scope)}`,
} as const;
