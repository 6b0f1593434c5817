import {
  createVerificationClient,
  detectDevice,
  type FetchLike,
  type VerificationClient,
  type VerificationClientError,
  type VerificationClientOptions,
  type VerificationState,
} from '../client/index.js';
import { duration, errorKey, languageOf, MESSAGES, type TextKey, type Texts } from './messages.js';
import { formatPhone, phoneDigits } from './phone-format.js';
import { STYLES } from './styles.js';

/** Headers the host adds to every request (`credentials="header"`): an object or a function giving one. */
export type HostHeaders =
  Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);

/** `detail` of the element's events. */
export interface PhoneVerificationEventDetail {
  verification_id: string | null;
  method: string | null;
  phone_number: string | null;
  /** `failed`, `error`: the refusal's code, if any. */
  error_code?: string;
  /** `error`: the HTTP status (0 without an answer) and the message the element shows. */
  status?: number;
  message?: string;
}

const TEMPLATE = `<div part="root">
<form id="start" part="form start-form" novalidate>
<label for="phone" part="label">_</label>
<input id="phone" part="input phone-input" type="tel" autocomplete="tel" inputmode="tel" aria-describedby="hint start-error">
<p id="hint" part="muted hint"></p>
<fieldset id="methods" part="methods" hidden><legend></legend><div id="options"></div></fieldset>
<p id="start-error" part="error" role="alert"></p>
<button id="go" part="button primary" type="submit"></button>
</form>
<section id="task" part="task" hidden>
<div id="screen" part="screen"></div>
<form id="code-form" part="form code-form" novalidate hidden>
<label for="code" id="code-label" part="label"></label>
<input id="code" part="input code-input" autocomplete="one-time-code" inputmode="numeric" pattern="[0-9]*" aria-describedby="attempts task-error">
<p id="attempts" part="muted attempts"></p>
<button id="check" part="button primary" type="submit"></button>
</form>
<p id="task-error" part="error" role="alert"></p>
<p id="timer" part="muted countdown"></p>
<div part="actions"><button id="resend" part="button secondary" type="button"></button><button id="switch" part="button secondary" type="button"></button><button id="cancel" part="button secondary" type="button"></button></div>
</section>
<section id="outcome" part="outcome" hidden>
<p id="title" part="outcome-title" tabindex="-1"></p>
<p id="text" part="outcome-text"></p>
<p id="outcome-error" part="error"></p>
<div part="actions"><button id="outcome-switch" part="button primary" type="button"></button><button id="again" part="button secondary" type="button"></button></div>
</section>
<p id="status" class="sr" role="status"></p>
</div>`;

const OUTCOMES = ['verified', 'failed', 'expired'];

/**
 * `HTMLElement`, or a stand-in outside a browser (a server rendering the page, Node loading every
 * module), so that the element's class still loads there.
 */
export const PhoneVerificationElementBase = (globalThis.HTMLElement ?? class {}) as typeof HTMLElement;

/**
 * `<phone-verification>`: the whole verification flow of the module's client routes in one element,
 * on `nestjs-phone-verification/client`. Attributes: `base-url` (default `/verification`), `methods`
 * (`auto`, or the methods to offer, space-separated, `auto` among them for "best for this device", `all`
 * for every method the server offers),
 * `credentials` (`same-origin` cookies by default, `include` for another origin's cookies, `header`
 * for the `headers` property), `country` (of a number typed without `+`, default RU), `lang`.
 * Events (bubbling, composed): `verified`, `failed`, `expired`, `canceled`, `error`.
 */
export class PhoneVerificationElement extends PhoneVerificationElementBase {
  #headers?: HostHeaders;
  #clientOptions?: VerificationClientOptions;

  /** Headers for every request (`credentials="header"`; read per request, so a token may change). */
  get headers(): HostHeaders | undefined {
    return this.#headers;
  }
  set headers(headers: HostHeaders | undefined) {
    this.#headers = headers;
  }

  /** More options of the client (`serverNow`, `storage`, `storageKey`, …), read when connected. */
  get clientOptions(): VerificationClientOptions | undefined {
    return this.#clientOptions;
  }
  set clientOptions(options: VerificationClientOptions | undefined) {
    this.#clientOptions = options;
  }

  /** The texts the host replaced, in the element's language. */
  get texts(): Texts {
    return this.#overrides[this.#lang2] ?? {};
  }
  // Replaces texts in both languages (as `setTexts(texts)`), for frameworks that set properties.
  set texts(texts: Texts) {
    this.setTexts(texts);
  }

  static readonly observedAttributes = ['lang'];

  readonly #root: ShadowRoot;
  #verification: VerificationClient | null = null;
  #unsubscribe: (() => void) | null = null;
  #overrides: Partial<Record<'en' | 'ru', Texts>> = {};
  #last: VerificationState | null = null;
  #screenKey = '';
  #lastError: VerificationClientError | null = null;
  #errorDismissed = false;
  /** The user acted in the element: focus may follow the flow (never stolen on page load). */
  #engaged = false;
  #notice = '';
  #deepLink = '';
  #offered: string[] = [];
  #localError = '';

  constructor() {
    super();
    this.#root = this.attachShadow({ mode: 'open' });
    // A constructed sheet: a strict Content-Security-Policy (no 'unsafe-inline' styles) allows it.
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(STYLES);
    this.#root.adoptedStyleSheets = [sheet];
    this.#root.innerHTML = TEMPLATE;
    const on = (id: string, type: string, listener: (event: Event) => void): void =>
      this.#$(id).addEventListener(type, (event) => {
        this.#engaged = true;
        listener(event);
      });
    on('start', 'submit', (event) => void this.#submitStart(event));
    on('phone', 'input', (event) => this.#formatTyped(event as InputEvent));
    on('code-form', 'submit', (event) => void this.#submitCode(event));
    on('code', 'input', () => this.#codeTyped());
    on('resend', 'click', () => void this.client.resend());
    on('switch', 'click', () => void this.#switchMethod());
    on('outcome-switch', 'click', () => void this.#switchMethod());
    on('cancel', 'click', () => void this.#cancel());
    on('again', 'click', () => this.client.reset());
    // A property set before the element was defined sits on the instance, over the accessor.
    const own = this as unknown as Record<string, unknown>;
    for (const key of ['headers', 'clientOptions', 'texts'])
      if (Object.hasOwn(this, key)) {
        const value = own[key];
        delete own[key];
        own[key] = value;
      }
  }

  /** The browser client underneath (e.g. `refresh()` when the page knows something changed). */
  get client(): VerificationClient {
    return (this.#verification ??= this.#createClient());
  }

  /** Replaces texts (all or some, by key; see `messages.ts`), for `lang` or for both languages. */
  setTexts(texts: Texts, lang?: 'en' | 'ru'): void {
    for (const l of lang ? [lang] : (['en', 'ru'] as const))
      this.#overrides[l] = { ...this.#overrides[l], ...texts };
    this.#refreshTexts();
  }

  connectedCallback(): void {
    this.#unsubscribe = this.client.subscribe((state) => this.#render(state));
    this.#refreshTexts();
    void this.#loadMethods();
    if (this.client.getState().phase === 'idle')
      void this.client.resume().then((resumed) => {
        if (resumed) this.#announce((this.#notice = this.#t('resumed')));
      });
  }

  disconnectedCallback(): void {
    this.#unsubscribe?.();
    // Timers and the stream stop; the saved verification stays for the next connect (or reload).
    this.#verification?.dispose();
    this.#verification = null;
    this.#last = null;
  }

  attributeChangedCallback(): void {
    if (this.isConnected) this.#refreshTexts();
  }

  #$<T extends HTMLElement = HTMLElement>(id: string): T {
    return this.#root.getElementById(id) as T;
  }

  get #lang2(): 'en' | 'ru' {
    const tagged = this.closest('[lang]')?.getAttribute('lang') ?? document.documentElement.lang;
    return languageOf(tagged || navigator.language || 'en');
  }

  #t(key: TextKey, values: Record<string, string | number> = {}): string {
    const lang = this.#lang2;
    const text = this.#overrides[lang]?.[key] ?? MESSAGES[lang][key] ?? MESSAGES.en[key] ?? key;
    return text.replace(/\{(\w+)\}/g, (_, name: string) => String(values[name] ?? ''));
  }

  #attempts(n: number): string {
    const key = `attempts_${new Intl.PluralRules(this.#lang2).select(n)}` as const;
    const text = this.#t(key, { n });
    return text === key ? this.#t('attempts_other', { n }) : text;
  }

  /** `fetch` with the credentials mode and, for `credentials="header"`, the host's headers. */
  readonly #send: FetchLike = async (url, init) => {
    const mode = this.getAttribute('credentials');
    const extra = typeof this.headers === 'function' ? await this.headers() : (this.headers ?? {});
    return fetch(url, {
      ...init,
      credentials: mode === 'include' ? 'include' : mode === 'header' ? 'omit' : init.credentials,
      headers: { ...init.headers, ...(mode === 'header' ? extra : {}) },
    });
  };

  get #baseUrl(): string {
    return this.getAttribute('base-url') ?? '/verification';
  }

  #createClient(): VerificationClient {
    const mode = this.getAttribute('credentials');
    return createVerificationClient({
      baseUrl: this.#baseUrl,
      fetch: this.#send,
      ...(mode === 'header'
        ? // #send adds the host's headers (they may be async) to every call; any `headers` makes the
          // client read the stream with fetch, which can carry them, where an EventSource cannot.
          { headers: () => ({}) }
        : {
            eventSource:
              typeof EventSource === 'function'
                ? (url: string) => new EventSource(url, { withCredentials: mode === 'include' })
                : null,
          }),
      ...this.clientOptions,
    });
  }

  /** The module's `phone.defaultCountry`, as `GET /methods` says it (a server before it: RU, its default). */
  #serverCountry = 'RU';

  get #country(): string {
    return this.getAttribute('country') ?? this.#serverCountry;
  }

  /** The methods to offer: the `methods` attribute, limited to what `GET /methods` says the server offers. */
  async #loadMethods(): Promise<void> {
    const wanted = (this.getAttribute('methods') ?? 'auto').split(/[\s,]+/).filter(Boolean);
    let offered = wanted.filter((m) => m !== 'all');
    this.#renderMethods(offered.length > 1 ? [] : offered);
    try {
      const response = await this.#send(`${this.#baseUrl}/methods`, {
        method: 'GET',
        headers: { accept: 'application/json' },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: new AbortController().signal,
      });
      const answer = (await response.json()) as { methods: { method: string }[]; default_country?: string };
      const methods = answer.methods;
      this.#serverCountry = answer.default_country ?? this.#serverCountry;
      // `all`: every method the server offers, in its order.
      offered = wanted.flatMap((m) =>
        m === 'all'
          ? methods.map((o) => o.method)
          : m === 'auto' || methods.some((o) => o.method === m)
            ? [m]
            : [],
      );
    } catch {
      // The start route refuses a method it does not offer, in words.
    }
    this.#renderMethods(offered);
  }

  #renderMethods(methods: string[]): void {
    this.#offered = methods;
    const options = this.#$('options');
    options.replaceChildren(
      ...methods.map((method, i) => {
        const label = document.createElement('label');
        label.setAttribute('part', 'method');
        label.innerHTML = `<input type="radio" name="method"${i === 0 ? ' checked' : ''}><span></span>`;
        (label.firstChild as HTMLInputElement).value = method;
        label.lastChild!.textContent = this.#methodName(method);
        return label;
      }),
    );
    this.#$('methods').hidden = methods.length < 2;
  }

  #methodName(method: string | null): string {
    const key = `m_${method}` as TextKey;
    const name = this.#t(key);
    return name === key ? (method ?? '') : name;
  }

  #refreshTexts(): void {
    for (const [id, key] of [
      ['hint', 'phoneHint'],
      ['go', 'start'],
      ['check', 'check'],
      ['cancel', 'cancel'],
      ['again', 'again'],
    ] as const)
      this.#$(id).textContent = this.#t(key);
    this.#$('start').querySelector('label')!.textContent = this.#t('phone');
    this.#$('methods').querySelector('legend')!.textContent = this.#t('method');
    this.#renderMethods(this.#offered);
    this.#screenKey = '';
    this.#render(this.client.getState());
  }

  #formatTyped(event: InputEvent): void {
    const input = event.target as HTMLInputElement;
    this.#localError = '';
    // Deleting keeps what the user left (a separator would come straight back).
    if (!event.inputType?.startsWith('delete') && input.selectionStart === input.value.length)
      input.value = formatPhone(input.value, this.#country);
    this.#render(this.client.getState());
  }

  async #submitStart(event: Event): Promise<void> {
    event.preventDefault();
    const state = this.client.getState();
    if (state.phase === 'starting' || (state.retryInMs ?? 0) > 0) return;
    const digits = phoneDigits((this.#$('phone') as HTMLInputElement).value, this.#country);
    if (digits.length < 8) {
      this.#localError = this.#t('e_phone');
      this.#render(state);
      return this.#focus$('phone');
    }
    this.#localError = '';
    this.#notice = '';
    const method = this.#root.querySelector<HTMLInputElement>('input[name=method]:checked')?.value ?? 'auto';
    await this.client.start({ phoneNumber: '+' + digits, method, device: detectDevice() });
  }

  #codeTyped(): void {
    const input = this.#$('code') as HTMLInputElement;
    const prompt = this.client.getState().prompt;
    if (prompt?.kind !== 'code') return;
    // A pasted "123-456" or "Your code: 123456" keeps its digits.
    input.value = input.value.replace(/\D/g, '').slice(0, prompt.maxLength);
    this.#errorDismissed = true;
    this.#render(this.client.getState());
    if (input.value.length === (prompt.length ?? prompt.maxLength)) void this.#submitCode();
  }

  async #submitCode(event?: Event): Promise<void> {
    event?.preventDefault();
    const state = this.client.getState();
    const input = this.#$('code') as HTMLInputElement;
    const prompt = state.prompt;
    if (prompt?.kind !== 'code' || state.phase !== 'awaiting_user' || (state.retryInMs ?? 0) > 0) return;
    if (input.value.length < prompt.minLength) {
      this.#localError = this.#t('e_codeFormat');
      this.#errorDismissed = false;
      this.#render(state);
      return this.#focus$('code');
    }
    this.#localError = '';
    this.#errorDismissed = false;
    const after = await this.client.check(input.value);
    if (after.error?.code === 'invalid_code' && after.phase === 'awaiting_user') {
      input.value = '';
      this.#focus$('code');
    }
  }

  async #switchMethod(): Promise<void> {
    const before = this.client.getState().method;
    this.#errorDismissed = false;
    const after = await this.client.switchMethod();
    if (after.method !== before) {
      this.#notice = this.#t('switched', { method: this.#methodName(after.method) });
      this.#announce(this.#notice);
    } else if (after.error) this.#focus$('switch');
  }

  async #cancel(): Promise<void> {
    const { phoneNumber } = this.client.getState();
    if (phoneNumber && !phoneNumber.includes('*'))
      (this.#$('phone') as HTMLInputElement).value = formatPhone(phoneNumber, this.#country);
    await this.client.cancel();
  }

  #focus$(id: string): void {
    if (this.#engaged) this.#$(id).focus();
  }

  #announce(text: string): void {
    this.#$('status').textContent = text;
  }

  #emit(type: string, state: VerificationState, extra: Partial<PhoneVerificationEventDetail> = {}): void {
    const detail: PhoneVerificationEventDetail = {
      verification_id: state.verificationId,
      method: state.method,
      phone_number: state.phoneNumber,
      ...extra,
    };
    this.dispatchEvent(new CustomEvent(type, { detail, bubbles: true, composed: true }));
  }

  /** The message of a refusal in the element's language. */
  describe(error: VerificationClientError, waitMs: number | null = null): string {
    const p = error.problem;
    switch (error.code) {
      case 'invalid_code':
        return typeof p.attempts_remaining === 'number'
          ? this.#t('e_invalid_code_left', { attempts: this.#attempts(p.attempts_remaining) })
          : this.#t('e_invalid_code');
      case 'not_pending':
        return p.verification_status && ['expired', 'verified', 'failed'].includes(p.verification_status)
          ? this.#t(`e_not_pending_${p.verification_status}` as TextKey)
          : this.#t('e_not_pending');
      case 'rate_limit_exceeded':
        if (waitMs && p.reason === 'resend_cooldown')
          return this.#t('e_resend_cooldown', { t: duration(waitMs) });
        return waitMs
          ? this.#t('e_rate_limit_wait', { t: duration(waitMs) })
          : this.#t('e_rate_limit_exceeded');
      case 'phone_not_allowed':
        if (p.reason === 'number_type') return this.#t('e_phone_type');
        break;
      case 'validation_error':
        if (p.errors?.some((e) => e.field === 'phone_number')) return this.#t('e_phone');
    }
    const key = errorKey(error.code);
    return this.#t(key, { code: error.code });
  }

  #render(s: VerificationState): void {
    const prev = this.#last;
    this.#last = s;
    // For the host's styles and tests: `phone-verification[data-phase='verified']`.
    this.dataset.phase = s.phase;
    const { phase, prompt, error } = s;
    // A resend is a new start: the method's screen stays while it runs.
    const starting = phase === 'starting';
    const idle = phase === 'idle' || phase === 'canceled' || (starting && this.#$('task').hidden);
    const outcome = OUTCOMES.includes(phase);
    this.#$('start').hidden = !idle;
    this.#$('task').hidden = idle || outcome;
    this.#$('outcome').hidden = !outcome;

    if (error && error !== this.#lastError) {
      this.#lastError = error;
      this.#errorDismissed = false;
      this.#emit('error', s, { error_code: error.code, status: error.status, message: this.describe(error) });
    }
    const message =
      this.#localError || (error && !this.#errorDismissed ? this.describe(error, s.retryInMs) : '');
    // A handle a reload left that the server no longer knows, or a cancel it did not hear of: nothing to say.
    const quiet = error?.code === 'not_found' || error?.code === 'no_verification' || phase === 'canceled';
    this.#$('start-error').textContent = idle && !quiet ? message : '';
    this.#$('task-error').textContent = idle || outcome ? '' : message;
    this.#$('outcome-error').textContent = outcome && error ? this.describe(error) : '';
    const go = this.#$<HTMLButtonElement>('go');
    const waiting = (s.retryInMs ?? 0) > 0;
    go.setAttribute('aria-disabled', String(phase === 'starting' || waiting));

    if (!idle && !outcome && !starting) this.#renderTask(s);
    if (outcome) this.#renderOutcome(s);

    // What changed: events, the live region and the focus follow the flow.
    if (prev && prev.phase !== phase) {
      if (outcome || phase === 'canceled') this.#emit(phase, s, error ? { error_code: error.code } : {});
      if (outcome) this.#announce(this.#$('title').textContent ?? '');
    }
    if (!prev || prev.phase !== phase || prev.prompt?.kind !== prompt?.kind || prev.method !== s.method) {
      if (phase === 'awaiting_user' || phase === 'verifying') {
        this.#announce(
          [this.#notice, this.#$('screen').firstElementChild?.textContent].filter(Boolean).join(' '),
        );
      }
      this.#focusNext(s);
    } else if (idle && error && error !== prev.error && !quiet) this.#focusStart(error);
  }

  #focusNext(s: VerificationState): void {
    const kind = s.prompt?.kind;
    if (s.phase === 'awaiting_user')
      return this.#focus$(
        kind === 'code' ? 'code' : kind === 'call' ? 'call' : kind === 'link' ? 'bot' : 'say',
      );
    if (s.phase === 'verifying' && !s.prompt) return this.#focus$('say');
    if (s.phase === 'verified') return this.#focus$('title');
    if (s.phase === 'failed' || s.phase === 'expired')
      return this.#focus$(s.canSwitch ? 'outcome-switch' : 'again');
    if (s.phase === 'idle' || s.phase === 'canceled')
      return s.error && s.error.code !== 'not_found' ? this.#focusStart(s.error) : this.#focus$('phone');
  }

  #focusStart(error: VerificationClientError): void {
    const aboutPhone =
      error.code === 'phone_not_allowed' ||
      (error.code === 'validation_error' && error.problem.errors?.some((e) => e.field === 'phone_number'));
    this.#focus$(aboutPhone ? 'phone' : error.code === 'method_not_available' ? 'options' : 'go');
  }

  #renderTask(s: VerificationState): void {
    const { prompt } = s;
    const phone = formatPhone(s.phoneNumber ?? '', this.#country);
    if (prompt?.kind === 'link') this.#deepLink = prompt.deepLink;
    const key = [s.method, prompt?.kind, s.phase, this.#deepLink, s.verificationId, this.#lang2].join('|');
    if (key !== this.#screenKey) {
      this.#screenKey = key;
      this.#$('screen').replaceChildren(...this.#screen(s, phone));
      if (prompt?.kind === 'code') (this.#$('code') as HTMLInputElement).value = '';
    }
    const code = prompt?.kind === 'code' ? prompt : null;
    this.#$('code-form').hidden = !code;
    if (code) {
      const input = this.#$<HTMLInputElement>('code');
      input.size = code.maxLength + 1;
      input.minLength = code.minLength;
      this.#$('code-label').textContent = code.length
        ? this.#t('code', { n: code.length })
        : this.#t('codeRange', { min: code.minLength, max: code.maxLength });
    }
    this.#$<HTMLButtonElement>('check').disabled = s.phase === 'verifying' || (s.retryInMs ?? 0) > 0;
    this.#$('attempts').textContent =
      code && s.attemptsRemaining !== null ? this.#attempts(s.attemptsRemaining) : '';
    this.#$('timer').textContent = s.expiresInMs ? this.#t('expires', { t: duration(s.expiresInMs) }) : '';
    const resend = this.#$<HTMLButtonElement>('resend');
    // Only a code is sent again; a call or a push is another way.
    resend.hidden = !code || s.method === 'operator_id' || (!s.canResend && !s.resendInMs);
    resend.disabled = !s.canResend;
    resend.textContent = s.resendInMs
      ? this.#t('resendIn', { t: duration(s.resendInMs) })
      : this.#t('resend');
    const switchButton = this.#$<HTMLButtonElement>('switch');
    switchButton.hidden = !s.switchMethods.length || (!s.canSwitch && !s.fallbackInMs);
    switchButton.disabled = !s.canSwitch;
    switchButton.textContent = s.fallbackInMs
      ? this.#t('switchIn', { t: duration(s.fallbackInMs) })
      : this.#t('switch');
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
      const a = document.createElement('a');
      Object.assign(a, { id, href, textContent: text });
      a.setAttribute('part', part);
      if (id === 'bot') Object.assign(a, { target: '_blank', rel: 'noopener' });
      return a;
    };
    const qr = (target: string): HTMLElement[] => {
      // On a phone the link itself is what to tap.
      if (detectDevice() !== 'desktop') return [];
      const box = document.createElement('div');
      box.setAttribute('part', 'qr');
      // Loaded when first drawn: a phone (and every method but two) never needs the encoder.
      void import('./qr.js').then(
        ({ qrSvg }) => (box.innerHTML = qrSvg(target, this.#t('qrLabel', { link: target }))),
      );
      return [box, p(this.#t('qr'), 'muted')];
    };
    const { prompt, method } = s;
    if (s.phase === 'verifying' && !prompt) return [say(this.#t('s_accepted'))];
    switch (prompt?.kind) {
      case 'call':
        return [
          say(this.#t('s_call', { phone })),
          link('call', prompt.telHref, formatPhone(prompt.numberToCall, this.#country), 'call-number'),
          ...qr(prompt.telHref),
          p(this.#t('s_callWait'), 'muted'),
        ];
      case 'link':
        return [
          say(this.#t('s_bot')),
          link('bot', prompt.deepLink, this.#t('s_openBot'), 'bot-link button primary'),
          ...qr(prompt.deepLink),
        ];
      case 'push':
        return [say(this.#t('s_push', { phone })), p(this.#t('s_pushWait'), 'muted')];
      case 'code': {
        const n = prompt.length ?? prompt.minLength;
        if (method === 'msgr2_bot')
          return [
            say(this.#t('s_botCode')),
            ...(this.#deepLink
              ? [link('bot', this.#deepLink, this.#t('s_openBot'), 'bot-link button secondary')]
              : []),
          ];
        const own = `s_${method === 'operator_id' ? 'pushSms' : method}` as TextKey;
        const text = this.#t(own, { phone, n });
        return [say(text === own ? this.#t('s_other') : text)];
      }
      default:
        return [say(this.#t('s_other'))];
    }
  }

  #renderOutcome(s: VerificationState): void {
    const lost = s.error?.code === 'not_found';
    const phase = s.phase as 'verified' | 'failed' | 'expired';
    this.#$('title').textContent = this.#t(phase);
    this.#$('text').textContent = lost
      ? ''
      : this.#t(`${phase}Text`, { phone: formatPhone(s.phoneNumber ?? '', this.#country) });
    const again = this.#$('again');
    again.hidden = phase === 'verified';
    const other = this.#$<HTMLButtonElement>('outcome-switch');
    other.hidden = !s.canSwitch || lost;
    other.textContent = this.#t('switch');
  }
}
