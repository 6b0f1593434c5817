/**
 * The client's own check of what the server hands it to open or call, before any `href` or QR code
 * (the module checks the API's answers too: `core/user-links.ts`; one table of cases proves the two
 * agree). A link is `https:` with a host, or a messenger's own scheme; a number to call is E.164.
 */
const LINK_SCHEMES: readonly string[] = ['https:', 'tg:', 'viber:', 'whatsapp:', 'max:'];

export function isSafeLink(link: unknown): link is string {
  if (typeof link !== 'string' || link.length > 2048 || /[\s\p{Cc}]/u.test(link)) return false;
  let url: URL;
  try {
    url = new URL(link);
  } catch {
    return false;
  }
  if (!LINK_SCHEMES.includes(url.protocol)) return false;
  return url.protocol !== 'https:' || (url.hostname !== '' && url.username === '' && url.password === '');
}

export function isSafeNumberToCall(value: unknown): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{7,14}$/.test(value);
}

/** What the element may put in an `href` or a QR code: a safe link, or `tel:` and a number to call. */
export function isSafeHref(href: unknown): href is string {
  if (typeof href === 'string' && href.startsWith('tel:')) return isSafeNumberToCall(href.slice(4));
  return isSafeLink(href);
}
