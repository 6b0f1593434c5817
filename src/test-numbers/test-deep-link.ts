import { randomInt } from 'node:crypto';

/** What a test session's `deep_link` is before any real `msgr2_bot` session showed the bot's link. */
export const TEST_DEEP_LINK = 'https://test-number.invalid/bot?start=test';

/** Store key of the last real bot link's template (its bot, without the start token). */
export const DEEP_LINK_TEMPLATE_KEY = 'test-number:deep-link';

/** Kept as long as a deployment's bot usually stays the same; renewed by every real bot session. */
export const DEEP_LINK_TEMPLATE_TTL_MS = 30 * 86_400_000;

const CLASSES = ['0123456789', 'abcdef', 'ghijklmnopqrstuvwxyz', 'ABCDEF', 'GHIJKLMNOPQRSTUVWXYZ'];

/**
 * A real session's link, as a test session's template: the same link with each character of its last
 * query value (the start token, per session) replaced at random by one of its own class (a digit by a
 * digit, a hex letter by a hex letter, ...), so that a test session's link is shaped like a real one's.
 * A link with no query value gives none (its token cannot be told from the bot's name).
 */
export function lookalikeLink(realLink: string): string | undefined {
  const match = /^(https:\/\/[^?#\s]+\?(?:[^=&#\s]+=[^&#\s]*&)*[^=&#\s]+=)([^&#\s]+)$/.exec(realLink);
  if (match === null) return undefined;
  const [, head, token] = match as unknown as [string, string, string];
  return head + [...token].map(lookalikeChar).join('');
}

function lookalikeChar(char: string): string {
  const chars = CLASSES.find((candidates) => candidates.includes(char));
  return chars === undefined ? char : chars[randomInt(chars.length)]!;
}
