import { randomBytes } from 'node:crypto';

/** Name of the cookie that tells one browser from another behind the same IP (no owner configured). */
export const BROWSER_KEY_COOKIE = 'pv_browser';

/** 128 random bits, base64url: what the module issues, and the only form it accepts back. */
const BROWSER_KEY_PATTERN = /^[A-Za-z0-9_-]{22}$/;
const COOKIE_PATTERN = new RegExp(`(?:^|;)\\s*${BROWSER_KEY_COOKIE}=([^;]*)`);

/** The browser key the request carries in its `pv_browser` cookie, when well-formed. */
export function readBrowserKey(request: unknown): string | undefined {
  const header = (request as { headers?: Record<string, unknown> } | undefined)?.headers?.cookie;
  if (typeof header !== 'string') return undefined;
  const value = COOKIE_PATTERN.exec(header)?.[1]?.trim();
  return value !== undefined && BROWSER_KEY_PATTERN.test(value) ? value : undefined;
}

export function newBrowserKey(): string {
  return randomBytes(16).toString('base64url');
}

/**
 * Adds the `Set-Cookie` of a browser key to the response (Express or Fastify), next to any cookie
 * the host set. HttpOnly (page scripts never read it), SameSite=Strict (never sent by another
 * site's requests), Secure when the request came over https, Path = the routes' prefix (sent only
 * to the client routes), no expiry (it ends with the browser session; a pending session lasts
 * minutes).
 */
export function setBrowserKeyCookie(request: unknown, response: unknown, key: string, prefix: string): void {
  const secure = (request as { protocol?: unknown } | undefined)?.protocol === 'https';
  const cookie =
    `${BROWSER_KEY_COOKIE}=${key}; Path=/${prefix}; HttpOnly; SameSite=Strict` + (secure ? '; Secure' : '');
  const reply = response as {
    append?: (name: string, value: string) => unknown;
    header?: (name: string, value: string) => unknown;
  };
  // Express appends with `append`; Fastify's `header('set-cookie')` adds to the cookies already set.
  if (typeof reply.append === 'function') reply.append('Set-Cookie', cookie);
  else if (typeof reply.header === 'function') reply.header('set-cookie', cookie);
}
