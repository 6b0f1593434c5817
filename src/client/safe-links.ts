/**
 * The client's own check of what the server hands it to open or call, before any `href` or QR code
 * (the module checks the API's answers too: `core/user-links.ts`, with the same shapes; one table of
 * cases proves the two agree). A number to call is E.164. A link is a messenger's own bot/start shape
 * (see `BOT_LINKS`), nothing else: no `javascript:`, `data:` or `http:`, nor a messenger's other links
 * (`tg://login`, a page with no `start` token).
 */
const BOT = '\\w+';
const TOKEN = '[\\w-]+';

/**
 * Each messenger's bot/start shape, exactly, as the API writes it (a lower-case scheme); an `https:`
 * path of up to 3 segments, the last the bot.
 */
const BOT_LINK = new RegExp(
  `^(https://[\\w-]+(\\.[\\w-]+)+(/[\\w.-]+){0,2}/${BOT}\\?start|tg://resolve\\?domain=${BOT}&start|` +
    `viber://pa\\?chatURI=${BOT}&context|max://${BOT}\\?start)=${TOKEN}$|^whatsapp://send\\?phone=[1-9]\\d{7,14}(&text=${TOKEN})?$`,
);

export function isSafeLink(link: unknown): link is string {
  return typeof link === 'string' && BOT_LINK.test(link);
}

export function isSafeNumberToCall(value: unknown): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{7,14}$/.test(value);
}

/** What the element may put in an `href` or a QR code: a safe link, or `tel:` and a number to call. */
export function isSafeHref(href: unknown): href is string {
  if (typeof href === 'string' && href.startsWith('tel:')) return isSafeNumberToCall(href.slice(4));
  return isSafeLink(href);
}
