/** When and how long VerificationApiClient waits before retrying a GET. */

const BACKOFF_BASE_MS = 100;
const BACKOFF_CAP_MS = 2000;

/**
 * `Retry-After` as ms: delta-seconds (`"2"`) or an HTTP-date; a date in the past is 0.
 * Absent or unparsable → undefined.
 */
export function parseRetryAfter(header: unknown, now: number = Date.now()): number | undefined {
  if (typeof header !== 'string') return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Full-jitter exponential backoff: uniform in [0, min(cap, base · 2^retry)). `retry` counts from 0. */
export function backoffDelay(retry: number, random: () => number = Math.random): number {
  const ceiling = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retry);
  return Math.floor(random() * ceiling);
}

/** HTTP statuses worth retrying for an idempotent request. */
export function isRetryableStatus(status: number): boolean {
  return status === 429 || status >= 500;
}
