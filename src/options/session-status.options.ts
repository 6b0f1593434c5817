// The options of a session's status: reconciling, the coalesced status cache and the status stream.

export interface ReconcileOptions {
  /** Poll sessions started through the module until terminal. Default true. */
  enabled?: boolean;
  /** Interval when webhooks are configured. Default 15000 ms. */
  lazyIntervalMs?: number;
  /** Grace after `expires_at` before a session is given up. Default 60000 ms. */
  graceMs?: number;
  /** How often this instance looks for due sessions (real time). Default 250 ms. */
  tickMs?: number;
}

export interface StatusCacheOptions {
  /** Coalesce status polls (one upstream GET per session per interval). Default true. */
  enabled?: boolean;
}

export interface StatusStreamOptions {
  /** Serve `GET /{prefix}/status/:verification_id/events` (Server-Sent Events). Default true. */
  enabled?: boolean;
  /** Streams one client (its `limits.key`, or its IP or IPv6 /64) may hold open on one instance. Default 5. */
  maxPerClient?: number;
  /**
   * Streams one verification (its `verification_id`) may have open on one instance, whoever holds
   * them: a handle shared with many addresses cannot hold that many connections. Default 5.
   */
  maxPerVerification?: number;
  /** A `: ping` comment this often keeps proxies from closing an idle stream. Default 15000 ms. */
  heartbeatMs?: number;
  /**
   * Longest life of one stream (real time); the browser reconnects if it still waits. A stream
   * also ends once its session is past `expires_at` + `reconcile.graceMs`. Default 600000 ms.
   */
  maxDurationMs?: number;
}
