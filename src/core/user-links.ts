/**
 * What the API may hand a user to open or call, checked where its answers are read (`api.mapper`).
 * The browser client checks the same again before any `href` or QR code (`client/safe-links.ts`, one
 * table of cases proves both agree).
 *
 * - A link (`deep_link`: `{messenger_url}/<bot>?start=<token>`) is a messenger's own bot/start shape,
 *   nothing else: `https://<host>/<bot>?start=<token>` (a path of up to 3 segments, the last the bot; no
 *   credentials, port or fragment), `tg://resolve?domain=<bot>&start=<token>`, `viber://pa?chatURI=
 *   <bot>&context=<token>`, `whatsapp://send?phone=<digits>` (and `text=<token>`), `max://<bot>?start=
 *   <token>`. So neither `javascript:`, `data:` or `http:`, nor a messenger's other links (`tg://login`,
 *   a page with no `start` token), pass.
 * - A number to call (`number_to_call`) is E.164: `+`, then 8 to 15 digits, the first not 0.
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

export function isUserLink(link: unknown): link is string {
  return typeof link === 'string' && BOT_LINK.test(link);
}

export function isNumberToCall(value: unknown): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{7,14}$/.test(value);
}
