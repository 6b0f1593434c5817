import { randomBytes } from 'node:crypto';

/** Name of the cookie that tells one browser from another behind the same IP (no owner configured). */
export const BROWSER_KEY_COOKIE = 'pv_browser';
/**
 * Its name on https: a `__Host-` cookie is set only by this very host (no `Domain`), `Secure` and for
 * `Path=/`, so a sibling subdomain cannot plant or shadow one and take over a pending session.
 */
export const SECURE_BROWSER_KEY_COOKIE = `__Host-${BROWSER_KEY_COOKIE}`;

/** 128 random bits, base64url: what the module issues, and the only form it accepts back. */
const BROWSER_KEY_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const COOKIE_PATTERN = new RegExp(`(?:^|;)\\s*${BROWSER_KEY_COOKIE}=([^;]*)`);
const SECURE_COOKIE_PATTERN = new RegExp(`(?:^|;)\\s*${SECURE_BROWSER_KEY_COOKIE}=([^;]*)`);

/** What the cookie functions read of an Express or Fastify request. */
interface CookieRequest {
  headers?: Record<string, unknown>;
  protocol?: unknown;
}

function isSecure(request: unknown): boolean {
  return (request as CookieRequest | undefined)?.protocol === 'https';
}

/**
 * The browser key the request carries, when well-formed: on https only the `__Host-` cookie counts
 * (a plain one may have been planted from a sibling subdomain); on plain http the plain cookie.
 */
export function readBrowserKey(request: unknown): string | undefined {
  const header = (request as CookieRequest | undefined)?.headers?.cookie;
  if (typeof header !== 'string') return undefined;
  const pattern = isSecure(request) ? SECURE_COOKIE_PATTERN : COOKIE_PATTERN;
  const value = pattern.exec(header)?.[1]?.trim();
  return value !== undefined && BROWSER_KEY_PATTERN.test(value) ? value : undefined;
}

export function newBrowserKey(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Adds the `Set-Cookie` of a browser key to the response (Express or Fastify), next to any cookie
 * the host set. HttpOnly (page scripts never read it), SameSite=Strict (never sent by another
 * site's requests), no expiry (it ends with the browser session; a pending session lasts minutes).
 * Over https: `__Host-pv_browser`, Secure, `Path=/` (the prefix requires it). Over http:
 * `pv_browser` on `path`, where the client routes are declared (the global prefix and
 * `routes.prefix`, never the request's URL: `…/start/` must not scope it to one route), so it is
 * sent only to them.
 */
export function setBrowserKeyCookie(request: unknown, response: unknown, key: string, path: string): void {
  const cookie = isSecure(request)
    ? `${SECURE_BROWSER_KEY_COOKIE}=${key}; Path=/; HttpOnly; SameSite=Strict; Secure`
    : `${BROWSER_KEY_COOKIE}=${key}; Path=${path}; HttpOnly; SameSite=Strict`;
  const reply = response as {
    append?: (name: string, value: string) => unknown;
    header?: (name: string, value: string) => unknown;
  };
  // Express appends with `append`; Fastify's `header('set-cookie')` adds to the cookies already set.
  if (typeof reply.append === 'function') reply.append('Set-Cookie', cookie);
  else if (typeof reply.header === 'function') reply.header('set-cookie', cookie);
}
