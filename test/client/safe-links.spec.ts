/**
 * One table of cases for the two checks of what a user is handed to open or call: the module's, where
 * the API's answers are read (core/user-links.ts), and the browser client's, before any href or QR code
 * (client/safe-links.ts, which the element uses too). No browser needed.
 */
import { describe, expect, it } from '@jest/globals';
import { isNumberToCall, isUserLink } from '../../src/core/user-links.js';
import { isSafeHref, isSafeLink, isSafeNumberToCall } from '../../src/client/safe-links.js';
import { phaseOf } from '../../src/client/user-prompt.js';
import type { StatusAnswer } from '../../src/client/types.js';

const LINKS: [unknown, boolean][] = [
  ['https://msgr2.example/verify_bot?start=abc', true],
  ['tg://resolve?domain=verify_bot&start=abc', true],
  ['viber://pa?chatURI=verify_bot&context=abc', true],
  ['whatsapp://send?phone=74950000000', true],
  ['max://verify_bot?start=abc', true],
  ['HTTPS://msgr2.example/verify_bot?start=abc', false],
  ['https://msgr2.example/m/verify_bot?start=abc', true],
  ['whatsapp://send?phone=74950000000&text=abc', true],
  // A messenger's other links, or its bot's with anything else: not a bot/start shape.
  ['https://msgr2.example/login', false],
  ['https://msgr2.example/verify_bot', false],
  ['https://msgr2.example/verify_bot?start=', false],
  ['https://msgr2.example/verify_bot?start=abc&redirect=https://evil.example', false],
  ['https://msgr2.example/verify_bot?start=abc&start=def', false],
  ['https://msgr2.example/verify_bot?start=abc#x', false],
  ['https://msgr2.example:8443/verify_bot?start=abc', false],
  ['https://msgr2.example/a/b/c/verify_bot?start=abc', false],
  ['https://msgr2.example/verify_bot?start=a%22b', false],
  ['https://localhost/verify_bot?start=abc', false],
  ['tg://login?token=abc', false],
  ['tg://login?domain=verify_bot&start=abc', false],
  ['tg://resolve?domain=verify_bot', false],
  ['tg://resolve?domain=verify_bot&start=abc&game=x', false],
  ['tg://msg_url?url=https://evil.example', false],
  ['viber://chat?number=74950000000', false],
  ['whatsapp://send?phone=74950000000&text=hello%20world', false],
  ['whatsapp://send?phone=abc', false],
  ['max://verify_bot/login?start=abc', false],
  ['max://verify_bot', false],
  ['javascript:alert(1)', false],
  ['JavaScript:alert(1)', false],
  ['java\tscript:alert(1)', false],
  [' javascript:alert(1)', false],
  ['javascript://%0aalert(1)', false],
  ['data:text/html,<script>alert(1)</script>', false],
  ['vbscript:msgbox(1)', false],
  ['http://msgr2.example/bot', false],
  ['https://user:pass@msgr2.example/bot', false],
  ['https://user@msgr2.example/bot', false],
  ['//msgr2.example/bot', false],
  ['/relative/bot', false],
  ['https://msgr2.example/bot\nx', false],
  [`https://msgr2.example/${'a'.repeat(2048)}`, false],
  ['', false],
  [null, false],
  [42, false],
  // Not text, though its text would be a bot link (an answer's array or object): refused.
  [['tg://resolve?domain=verify_bot&start=abc'], false],
  [{ toString: () => 'https://msgr2.example/verify_bot?start=abc' }, false],
];

const NUMBERS: [unknown, boolean][] = [
  ['+74950000000', true],
  ['+12025550123', true],
  ['+123456789012345', true],
  ['+1234567', false],
  ['+1234567890123456', false],
  ['+04950000000', false],
  ['74950000000', false],
  ['+7 495 000-00-00', false],
  ['+74950000000\n', false],
  ['tel:+74950000000', false],
  [' +74950000000', false],
  ['javascript:alert(1)', false],
  [74950000000, false],
  [undefined, false],
];

describe('what a user is handed to open or call', () => {
  it.each(LINKS)('link %j: %s, by the module and by the client alike', (link, allowed) => {
    expect(isUserLink(link)).toBe(allowed);
    expect(isSafeLink(link)).toBe(allowed);
    expect(isSafeHref(link)).toBe(allowed);
  });

  it('a number to call that is not text, though its text would be one (an array in an answer), is refused', () => {
    expect(isNumberToCall(['+74950000000'])).toBe(false);
    expect(isSafeNumberToCall(['+74950000000'])).toBe(false);
  });

  it('tel: is an href for a number to call, never a link the API may hand over', () => {
    expect(isUserLink('tel:+74950000000')).toBe(false);
    expect(isSafeLink('tel:+74950000000')).toBe(false);
    expect(isSafeHref('tel:+74950000000')).toBe(true);
  });

  it.each(NUMBERS)('number to call %j: %s, by the module and by the client alike', (number, allowed) => {
    expect(isNumberToCall(number)).toBe(allowed);
    expect(isSafeNumberToCall(number)).toBe(allowed);
    expect(isSafeHref(`tel:${String(number)}`)).toBe(allowed);
  });

  const answer = (extra: Partial<StatusAnswer>): StatusAnswer =>
    ({ status: 'sent', method: 'msgr2_bot', awaiting_code: false, ...extra }) as StatusAnswer;

  it('the client never makes a prompt to open or call out of a hostile answer: the user waits instead', () => {
    expect(phaseOf(answer({ deep_link: 'javascript:alert(1)' }), false).prompt).toEqual({ kind: 'push' });
    expect(phaseOf(answer({ number_to_call: 'javascript:alert(1)' }), false).prompt).toEqual({
      kind: 'push',
    });
    expect(phaseOf(answer({ deep_link: 'https://m.example/b?start=t' }), false).prompt).toEqual({
      kind: 'link',
      deepLink: 'https://m.example/b?start=t',
    });
    expect(phaseOf(answer({ number_to_call: '+74950000000' }), false).prompt).toEqual({
      kind: 'call',
      numberToCall: '+74950000000',
      telHref: 'tel:+74950000000',
    });
  });
});
