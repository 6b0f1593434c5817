import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { IDLE } from '../../src/client/client-state.js';
import { VerificationClientError } from '../../src/client/errors.js';
import type { UserPrompt, VerificationState } from '../../src/client/types.js';
import { ElementTexts } from '../../src/element/element-texts.js';
import { renderMethods, TaskView } from '../../src/element/element-view.js';

/**
 * The element's task section as a user sees it after each state, without a browser: which buttons show,
 * which can be pressed and what they say (the check, the resend and the switch, each with its countdown),
 * the code field's label, the timer, and when a half-typed code is cleared. The parts are plain objects
 * holding what the view sets on them; the Chromium suite checks the same parts on a real page.
 */
class Part {
  tag = '';
  attrs: Record<string, string> = {};
  href?: string;
  target?: string;
  rel?: string;
  innerHTML = '';
  firstChild?: Part;
  lastChild?: Part;
  hidden = false;
  disabled = false;
  textContent = '';
  value = '';
  size = 0;
  minLength = 0;
  id = '';
  tabIndex = 0;
  children: unknown[] = [];
  setAttribute(name: string, value: string): void {
    this.attrs[name] = value;
  }
  replaceChildren(...children: unknown[]): void {
    this.children = children;
  }
}

const realDocument = (globalThis as { document?: unknown }).document;
beforeAll(() => {
  (globalThis as { document?: unknown }).document = {
    createElement: (tag: string) => {
      const part = Object.assign(new Part(), { tag });
      if (tag === 'label') Object.assign(part, { firstChild: new Part(), lastChild: new Part() });
      return part;
    },
  };
});
afterAll(() => {
  (globalThis as { document?: unknown }).document = realDocument;
});

function taskView() {
  const parts = new Map<string, Part>();
  const $ = (id: string) => parts.get(id) ?? parts.set(id, new Part()).get(id)!;
  const host = { closest: () => ({ getAttribute: () => 'en' }) } as unknown as HTMLElement;
  const element = { $: $ as never, country: () => 'RU', texts: new ElementTexts(host) };
  return { view: new TaskView(element), $, element };
}

const code: UserPrompt = { kind: 'code', length: 6, minLength: 6, maxLength: 6 };
const awaiting = (over: Partial<VerificationState> = {}): VerificationState => ({
  ...IDLE,
  phase: 'awaiting_user',
  method: 'sms',
  prompt: code,
  verificationId: 'v-1',
  phoneNumber: '+79161234567',
  ...over,
});

describe("the element's task section", () => {
  it("the check button waits out a refusal's wait and a check under way, and only those", () => {
    const { view, $ } = taskView();
    view.show(awaiting({ retryInMs: 5_000 }));
    expect($('check').disabled).toBe(true);
    view.show(awaiting({ retryInMs: 0 }));
    expect($('check').disabled).toBe(false);
    view.show(awaiting({ retryInMs: null }));
    expect($('check').disabled).toBe(false);
    view.show(awaiting({ phase: 'verifying' }));
    expect($('check').disabled).toBe(true);
  });

  it('the resend button counts down while the cooldown runs (shown, not pressable), then is pressable', () => {
    const { view, $ } = taskView();
    view.show(awaiting({ canResend: false, resendInMs: 30_000 }));
    expect([$('resend').hidden, $('resend').disabled, $('resend').textContent]).toStrictEqual([
      false,
      true,
      'New code in 0:30',
    ]);
    view.show(awaiting({ canResend: true, resendInMs: null }));
    expect([$('resend').hidden, $('resend').disabled, $('resend').textContent]).toStrictEqual([
      false,
      false,
      'Send a new code',
    ]);
    // Neither a resend nor a countdown: no button.
    view.show(awaiting({ canResend: false, resendInMs: null }));
    expect($('resend').hidden).toBe(true);
    // The operator's SMS fallback code: a resend would be another push, not this code again.
    view.show(awaiting({ method: 'operator_id', canResend: true, resendInMs: null }));
    expect($('resend').hidden).toBe(true);
  });

  it('the switch button counts down to the fallback moment (shown, not pressable), then is pressable; none without another method', () => {
    const { view, $ } = taskView();
    view.show(awaiting({ switchMethods: ['flash_call'], canSwitch: false, fallbackInMs: 20_000 }));
    expect([$('switch').hidden, $('switch').disabled, $('switch').textContent]).toStrictEqual([
      false,
      true,
      'Another way in 0:20',
    ]);
    view.show(awaiting({ switchMethods: ['flash_call'], canSwitch: true, fallbackInMs: null }));
    expect([$('switch').hidden, $('switch').disabled, $('switch').textContent]).toStrictEqual([
      false,
      false,
      'Try another way',
    ]);
    view.show(awaiting({ switchMethods: ['flash_call'], canSwitch: false, fallbackInMs: null }));
    expect($('switch').hidden).toBe(true);
    view.show(awaiting({ switchMethods: [], canSwitch: true }));
    expect($('switch').hidden).toBe(true);
  });

  it("a code of one length is asked by its length, a range by its bounds; the timer shows only a session's time left", () => {
    const { view, $ } = taskView();
    view.show(awaiting({ expiresInMs: 65_000 }));
    expect([$('code-label').textContent, $('timer').textContent]).toStrictEqual([
      'Enter the 6-digit code',
      'Expires in 1:05',
    ]);
    view.show(
      awaiting({ prompt: { kind: 'code', minLength: 4, maxLength: 6 } as UserPrompt, expiresInMs: null }),
    );
    expect([$('code-label').textContent, $('timer').textContent]).toStrictEqual([
      'Enter the code (4 to 6 digits)',
      '',
    ]);
  });

  it('a half-typed code stays while the same verification is redrawn, and is cleared for a new verification', () => {
    const { view, $ } = taskView();
    view.show(awaiting());
    $('code').value = '12';
    view.show(awaiting({ expiresInMs: 60_000 }));
    expect($('code').value).toBe('12');
    // A new verification of the same method (a new start after a failure): a new screen, an empty field.
    view.show(awaiting({ verificationId: 'v-2' }));
    expect($('code').value).toBe('');
  });

  it('an outcome offers another method only for a verification the server still has, and a new start unless verified', () => {
    const { view, $ } = taskView();
    const ended = (over: Partial<VerificationState>) => awaiting({ prompt: null, canSwitch: true, ...over });
    view.show(ended({ phase: 'failed' }));
    view.showOutcome(ended({ phase: 'failed' }));
    expect([$('outcome-switch').hidden, $('again').hidden]).toStrictEqual([false, false]);
    expect($('text').textContent).toBe('Try another way or start again.');
    // The verification is gone from the server (404): nothing to switch from, no number to speak of.
    const lost = new VerificationClientError('not_found', 404, {});
    view.showOutcome(ended({ phase: 'expired', error: lost }));
    expect([$('outcome-switch').hidden, $('again').hidden, $('text').textContent]).toStrictEqual([
      true,
      false,
      '',
    ]);
    view.showOutcome(ended({ phase: 'verified', canSwitch: false }));
    expect([$('outcome-switch').hidden, $('again').hidden]).toStrictEqual([true, true]);
  });

  it('a link is clickable only when safe; the bot stays a tap away while its code is awaited', () => {
    const { view, $ } = taskView();
    const hrefs = () => ($('screen').children as Part[]).map((el) => (el as Part & { href?: string }).href);
    const link = (deepLink: string) => awaiting({ method: 'msgr2_bot', prompt: { kind: 'link', deepLink } });
    view.show(link('javascript:alert(1)'));
    expect(hrefs().filter((href) => href !== undefined)).toStrictEqual([]);
    view.show(link('https://t.me/verify_bot?start=abc'));
    expect(hrefs()).toContain('https://t.me/verify_bot?start=abc');
    // The bot sent the code: the screen asks for it, and still links the bot (for a user who closed it).
    view.show(awaiting({ method: 'msgr2_bot', prompt: code }));
    expect(hrefs()).toContain('https://t.me/verify_bot?start=abc');
  });

  /** The screen as a user meets it: each part's tag, id, part name, text and link. */
  const screenOf = ($: (id: string) => Part) =>
    ($('screen').children as Part[]).map((el) => {
      const link = el.href === undefined ? {} : { href: el.href, target: el.target, rel: el.rel };
      return { tag: el.tag, id: el.id, part: el.attrs.part, text: el.textContent, ...link };
    });
  const say = (text: string) => ({ tag: 'p', id: 'say', part: undefined, text });

  it.each<[string, Partial<VerificationState>, object[]]>([
    [
      'a number to call (the reverse call)',
      {
        method: 'reverse_flash_call',
        prompt: { kind: 'call', numberToCall: '+78005551234', telHref: 'tel:+78005551234' },
      },
      [
        say('Call this number from +7 916 123-45-67. The call is free and ends by itself.'),
        {
          tag: 'a',
          id: 'call',
          part: 'call-number',
          text: '+7 800 555-12-34',
          href: 'tel:+78005551234',
          target: undefined,
          rel: undefined,
        },
        { tag: 'p', id: '', part: 'muted', text: 'Waiting for your call…' },
      ],
    ],
    [
      'a bot to open',
      { method: 'msgr2_bot', prompt: { kind: 'link', deepLink: 'https://t.me/b?start=1' } },
      [
        say('Open our bot and share your phone number: the bot sends you a code.'),
        {
          tag: 'a',
          id: 'bot',
          part: 'bot-link button primary',
          text: 'Open the bot',
          href: 'https://t.me/b?start=1',
          target: '_blank',
          rel: 'noopener',
        },
      ],
    ],
    [
      "the operator's prompt",
      { method: 'operator_id', prompt: { kind: 'push' } },
      [
        say('Approve the prompt your mobile operator shows on +7 916 123-45-67.'),
        { tag: 'p', id: '', part: 'muted', text: 'Waiting for your confirmation…' },
      ],
    ],
    ['an SMS code', { method: 'sms' }, [say('We sent a code by SMS to +7 916 123-45-67.')]],
    [
      "the operator's SMS fallback",
      { method: 'operator_id' },
      [say('The operator could not show the prompt, so we sent a code by SMS to +7 916 123-45-67.')],
    ],
    [
      'a method without its own text',
      { method: 'msgr9_otp' as never },
      [say('Follow the instructions on your phone.')],
    ],
    [
      "the operator's verdict awaited",
      { method: 'operator_id', phase: 'verifying', prompt: null },
      [say('Code accepted. Your operator is confirming…')],
    ],
    ['nothing to do here', { method: 'sms', prompt: null }, [say('Follow the instructions on your phone.')]],
  ])('the screen of %s says what to do, the first paragraph for the live region', (_name, over, screen) => {
    const { view, $ } = taskView();
    view.show(awaiting(over));
    expect(screenOf($)).toStrictEqual(screen);
    expect(($('screen').children[0] as Part).tabIndex).toBe(-1);
  });

  it('the methods offered are a choice of two or more, the first one checked, each named for the user', () => {
    const { element, $ } = taskView();
    renderMethods(element, ['sms', 'flash_call']);
    const labels = $('options').children as Part[];
    expect(
      labels.map((l) => [
        l.attrs.part,
        l.innerHTML.includes(' checked'),
        l.firstChild!.value,
        l.lastChild!.textContent,
      ]),
    ).toStrictEqual([
      ['method', true, 'sms', 'SMS code'],
      ['method', false, 'flash_call', 'Missed call'],
    ]);
    expect($('methods').hidden).toBe(false);
    renderMethods(element, ['sms']);
    expect([($('options').children as Part[]).length, $('methods').hidden]).toStrictEqual([1, true]);
  });

  it('the texts changed: the same state is drawn again', () => {
    const { view, $ } = taskView();
    view.show(awaiting());
    $('code').value = '12';
    view.show(awaiting());
    expect($('code').value).toBe('12');
    view.reset();
    view.show(awaiting());
    expect($('code').value).toBe('');
  });
});
