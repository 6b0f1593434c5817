import { detectDevice, type VerificationClientError, type VerificationState } from '../client/index.js';
import { isSafeHref } from '../client/safe-links.js';
import { duration, type TextKey } from './messages.js';
import { formatPhone } from './phone-format.js';
import { attemptsLine } from './refusal-text.js';
import type { ElementTexts } from './element-texts.js';

/** What the views read of the element: its parts by id, its texts and the country numbers are written in. */
export interface ElementView {
  $<T extends HTMLElement = HTMLElement>(id: string): T;
  country(): string;
  texts: ElementTexts;
}

/** The methods the start form offers (a choice only when there are two or more). */
export function renderMethods(view: ElementView, methods: string[]): void {
  view.$('options').replaceChildren(
    ...methods.map((method, i) => {
      const label = document.createElement('label');
      label.setAttribute('part', 'method');
      label.innerHTML = `<input type="radio" name="method"${i === 0 ? ' checked' : ''}><span></span>`;
      (label.firstChild as HTMLInputElement).value = method;
      label.lastChild!.textContent = view.texts.methodName(method);
      return label;
    }),
  );
  view.$('methods').hidden = methods.length < 2;
}

/** The task and outcome sections of the element, drawn from the client's state. */
export class TaskView {
  /** The screen drawn last (method, prompt, phase, link, verification, language): redrawn only when it changes. */
  #key = '';
  #deepLink = '';

  readonly #view: ElementView;

  constructor(view: ElementView) {
    this.#view = view;
  }

  /** The texts changed: the screen is drawn again. */
  reset(): void {
    this.#key = '';
  }

  /**
   * The task: the method's screen, the code form, the timers and the resend and switch buttons.
   * `errorShown`: whether the state's refusal is on screen (typing dismisses it, and the count it said
   * goes back under the code field).
   */
  show(s: VerificationState, errorShown = true): void {
    const { prompt } = s;
    const phone = formatPhone(s.phoneNumber ?? '', this.#view.country());
    if (prompt?.kind === 'link') this.#deepLink = prompt.deepLink;
    const key = [
      s.method,
      prompt?.kind,
      s.phase,
      this.#deepLink,
      s.verificationId,
      this.#view.texts.lang(),
    ].join('|');
    if (key !== this.#key) {
      this.#key = key;
      this.#view.$('screen').replaceChildren(...this.#screen(s, phone));
      if (prompt?.kind === 'code') (this.#view.$('code') as HTMLInputElement).value = '';
    }
    const code = prompt?.kind === 'code' ? prompt : null;
    this.#view.$('code-form').hidden = !code;
    if (code) {
      const input = this.#view.$<HTMLInputElement>('code');
      input.size = code.maxLength + 1;
      input.minLength = code.minLength;
      this.#view.$('code-label').textContent = code.length
        ? this.#view.texts.t('code', { n: code.length })
        : this.#view.texts.t('codeRange', { min: code.minLength, max: code.maxLength });
    }
    this.#view.$<HTMLButtonElement>('check').disabled = s.phase === 'verifying' || (s.retryInMs ?? 0) > 0;
    this.#view.$('attempts').textContent = code
      ? attemptsLine(s.attemptsRemaining, errorShown ? s.error : null, this.#view.texts)
      : '';
    this.#view.$('timer').textContent = s.expiresInMs
      ? this.#view.texts.t('expires', { t: duration(s.expiresInMs) })
      : '';
    const resend = this.#view.$<HTMLButtonElement>('resend');
    // Only a code is sent again; a call or a push is another way.
    resend.hidden = !code || s.method === 'operator_id' || (!s.canResend && !s.resendInMs);
    resend.disabled = !s.canResend;
    resend.textContent = s.resendInMs
      ? this.#view.texts.t('resendIn', { t: duration(s.resendInMs) })
      : this.#view.texts.t('resend');
    const switchButton = this.#view.$<HTMLButtonElement>('switch');
    switchButton.hidden = !s.switchMethods.length || (!s.canSwitch && !s.fallbackInMs);
    switchButton.disabled = !s.canSwitch;
    switchButton.textContent = s.fallbackInMs
      ? this.#view.texts.t('switchIn', { t: duration(s.fallbackInMs) })
      : this.#view.texts.t('switch');
  }

  /** The outcome: verified, failed or expired, and whether another method may be tried. */
  showOutcome(s: VerificationState): void {
    const lost = s.error?.code === 'not_found';
    const phase = s.phase as 'verified' | 'failed' | 'expired';
    this.#view.$('title').textContent = this.#view.texts.t(phase);
    this.#view.$('text').textContent = lost
      ? ''
      : this.#view.texts.t(`${phase}Text`, { phone: formatPhone(s.phoneNumber ?? '', this.#view.country()) });
    this.#view.$('again').hidden = phase === 'verified';
    const other = this.#view.$<HTMLButtonElement>('outcome-switch');
    other.hidden = !s.canSwitch || lost;
    other.textContent = this.#view.texts.t('switch');
  }

  /** The method's own screen: what to do now. Its first paragraph (`#say`) is what the live region says. */
  #screen(s: VerificationState, phone: string): Node[] {
    const p = (text: string, part = ''): HTMLElement => {
      const el = document.createElement('p');
      el.textContent = text;
      if (part) el.setAttribute('part', part);
      return el;
    };
    const say = (text: string): HTMLElement => {
      const el = p(text);
      el.id = 'say';
      el.tabIndex = -1;
      return el;
    };
    const link = (id: string, href: string, text: string, part: string): HTMLElement => {
      // Checked once more where it becomes clickable: anything else is shown as text, never a link.
      if (!isSafeHref(href)) return p(text);
      const a = document.createElement('a');
      Object.assign(a, { id, href, textContent: text });
      a.setAttribute('part', part);
      if (id === 'bot') Object.assign(a, { target: '_blank', rel: 'noopener' });
      return a;
    };
    const qr = (target: string): HTMLElement[] => {
      // On a phone the link itself is what to tap.
      if (detectDevice() !== 'desktop' || !isSafeHref(target)) return [];
      const box = document.createElement('div');
      box.setAttribute('part', 'qr');
      const hint = p(this.#view.texts.t('qr'), 'muted');
      // Loaded when first drawn: a phone (and every method but two) never needs the encoder.
      void import('./qr.js').then(({ qrSvg }) => {
        const svg = qrSvg(target, this.#view.texts.t('qrLabel', { link: target }));
        if (svg) box.innerHTML = svg;
        else for (const part of [box, hint]) part.remove(); // longer than a code holds: the link stays
      });
      return [box, hint];
    };
    const { prompt, method } = s;
    if (s.phase === 'verifying' && !prompt) return [say(this.#view.texts.t('s_accepted'))];
    switch (prompt?.kind) {
      case 'call':
        return [
          say(this.#view.texts.t('s_call', { phone })),
          link('call', prompt.telHref, formatPhone(prompt.numberToCall, this.#view.country()), 'call-number'),
          ...qr(prompt.telHref),
          p(this.#view.texts.t('s_callWait'), 'muted'),
        ];
      case 'link':
        return [
          say(this.#view.texts.t('s_bot')),
          link('bot', prompt.deepLink, this.#view.texts.t('s_openBot'), 'bot-link button primary'),
          ...qr(prompt.deepLink),
        ];
      case 'push':
        return [say(this.#view.texts.t('s_push', { phone })), p(this.#view.texts.t('s_pushWait'), 'muted')];
      case 'code': {
        const n = prompt.length ?? prompt.minLength;
        if (method === 'msgr2_bot')
          return [
            say(this.#view.texts.t('s_botCode')),
            ...(this.#deepLink
              ? [link('bot', this.#deepLink, this.#view.texts.t('s_openBot'), 'bot-link button secondary')]
              : []),
          ];
        const own = `s_${method === 'operator_id' ? 'pushSms' : method}` as TextKey;
        const text = this.#view.texts.t(own, { phone, n });
        return [say(text === own ? this.#view.texts.t('s_other') : text)];
      }
      default:
        return [say(this.#view.texts.t('s_other'))];
    }
  }
}

/** The part to focus once the state is `s` (by id), if any: focus follows the flow. */
export function focusAfter(s: VerificationState): string | undefined {
  const kind = s.prompt?.kind;
  if (s.phase === 'awaiting_user')
    return kind === 'code' || kind === 'call' ? kind : kind === 'link' ? 'bot' : 'say';
  if (s.phase === 'verifying' && !s.prompt) return 'say';
  if (s.phase === 'verified') return 'title';
  if (s.phase === 'failed' || s.phase === 'expired') return s.canSwitch ? 'outcome-switch' : 'again';
  if (s.phase === 'idle' || s.phase === 'canceled')
    return s.error && s.error.code !== 'not_found' ? focusOnRefusal(s.error) : 'phone';
  return undefined;
}

/** The part a refused start sends the user back to. */
export function focusOnRefusal(error: VerificationClientError): string {
  const aboutPhone =
    error.code === 'phone_not_allowed' ||
    (error.code === 'validation_error' && error.problem.errors?.some((e) => e.field === 'phone_number'));
  return aboutPhone ? 'phone' : error.code === 'method_not_available' ? 'options' : 'go';
}
