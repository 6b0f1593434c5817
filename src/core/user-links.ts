/**
 * What the API may hand a user to open or call, checked where its answers are read (`api.mapper`).
 * The browser client checks the same again before any `href` or QR code (`client/safe-links.ts`, one
 * table of cases proves both agree).
 *
 * - A link (`deep_link`: `{messenger_url}/<bot>?start=<token>`) is `https:` with a host, or a
 *   messenger's own scheme: never `javascript:`, `data:`, `http:` or anything a page would run.
 * - A number to call (`number_to_call`) is E.164: `+`, then 8 to 15 digits, the first not 0.
 */
export const USER_LINK_SCHEMES: readonly string[] = ['https:', 'tg:', 'viber:', 'whatsapp:', 'max:'];

const MAX_LINK_CHARS = 2048;

export function isUserLink(link: unknown): link is string {
  if (typeof link !== 'string' || link.length > MAX_LINK_CHARS || /[\s\p{Cc}]/u.test(link)) return false;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return false;
  }
  if (!USER_LINK_SCHEMES.includes(url.protocol)) return false;
  return url.protocol !== 'https:' || (url.hostname !== '' && url.username === '' && url.password === '');
}

export function isNumberToCall(value: unknown): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{7,14}$/.test(value);
}
