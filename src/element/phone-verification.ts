import {
  detectDevice,
  type VerificationClient,
  type VerificationClientError,
  type VerificationClientOptions,
  type VerificationState,
} from '../client/index.js';
import { elementClient, hostFetch, offeredMethods, type HostHeaders } from './element-client.js';
import { TEMPLATE } from './element-template.js';
import { type Texts } from './messages.js';
import { formatPhone, phoneDigits } from './phone-format.js';
import { refusalText } from './refusal-text.js';
import { STYLES } from './styles.js';
import { elementEvent } from './element-events.js';
import { ElementTexts } from './element-texts.js';
import { focusAfter, focusOnRefusal, renderMethods, TaskView, type ElementView } from './element-view.js';

export type { HostHeaders } from './element-client.js';
export type { PhoneVerificationEventDetail } from './element-events.js';

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
  // Plain properties, made own in the constructor (no field initializer would keep one a page set first).
  /** Headers for every request (`credentials="header"`; read per request, so a token may change). */
  declare headers?: HostHeaders;
  /** More options of the client (`serverNow`, `storage`, `storageKey`, …), read when connected. */
  declare clientOptions?: VerificationClientOptions;

  /** The texts the host replaced, in the element's language. */
  get texts(): Texts {
    return this.#texts.replaced();
  }
  // Replaces texts in both languages (as `setTexts(texts)`), for frameworks that set properties.
  set texts(texts: Texts) {
    this.setTexts(texts);
  }

  static readonly observedAttributes = ['lang'];

  readonly #root: ShadowRoot;
  #verification: VerificationClient | null = null;
  #unsubscribe: (() => void) | null = null;
  #last: VerificationState | null = null;
  #lastError: VerificationClientError | null = null;
  #errorDismissed = false;
  /** The user acted in the element: focus may follow the flow (never stolen on page load). */
  #engaged = false;
  #notice = '';
  #offered: string[] = [];
  #localError = '';
  readonly #texts = new ElementTexts(this);
  /** What the views read of the element. */
  readonly #view: ElementView = { $: (id) => this.#$(id), country: () => this.#country, texts: this.#texts };
  readonly #task = new TaskView(this.#view);
  readonly #send = hostFetch(this, () => this.headers);

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
    // Own properties, so that React sets them as properties (`'headers' in el`); one a page set
    // before the element was defined is kept. Texts set then sit on the instance, over the accessor.
    Object.assign(this, { headers: this.headers, clientOptions: this.clientOptions });
    if (Object.hasOwn(this, 'texts')) {
      const { texts } = this as { texts: Texts };
      delete (this as Partial<typeof this>).texts;
      this.texts = texts;
    }
  }

  /** The browser client underneath (e.g. `refresh()` when the page knows something changed). */
  get client(): VerificationClient {
    return (this.#verification ??= elementClient(this, this.#baseUrl, this.#send, this.clientOptions));
  }

  /** Replaces texts (all or some, by key; see `messages.ts`), for `lang` or for both languages. */
  setTexts(texts: Texts, lang?: 'en' | 'ru'): void {
    this.#texts.replace(texts, lang);
    this.#refreshTexts();
  }

  connectedCallback(): void {
    // After the script that defined or added the element: what it set next (`headers`, `clientOptions`) is
    // in effect for the first requests. Removed meanwhile, or already running: nothing.
    queueMicrotask(() => {
      if (!this.isConnected || this.#unsubscribe) return;
      this.#unsubscribe = this.client.subscribe((state) => this.#render(state));
      this.#refreshTexts();
      void this.#loadMethods();
      if (this.client.getState().phase === 'idle')
        void this.client.resume().then((resumed) => {
          if (resumed) this.#announce((this.#notice = this.#texts.t('resumed')));
        });
    });
  }

  disconnectedCallback(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = null;
    // Timers and the stream stop; the saved verification stays for the next connect (or reload).
    this.#verification?.dispose();
    this.#verification = null;
    this.#last = null;
  }

  attributeChangedCallback(): void {
    this.#refreshTexts();
  }

  #$<T extends HTMLElement = HTMLElement>(id: string): T {
    return this.#root.getElementById(id) as T;
  }

  get #baseUrl(): string {
    return this.getAttribute('base-url') ?? '/verification';
  }

  /** The methods to offer: the `methods` attribute, limited to what `GET /methods` says the server offers. */
  async #loadMethods(): Promise<void> {
    const wanted = (this.getAttribute('methods') ?? 'auto').split(/[\s,]+/).filter(Boolean);
    const asked = wanted.filter((m) => m !== 'all');
    this.#showMethods(asked.length > 1 ? [] : asked);
    const { offered, country, refusal } = await offeredMethods(this.#send, this.#baseUrl, wanted);
    this.#serverCountry = country ?? this.#serverCountry;
    this.#showMethods(offered);
    // The host's own refusal (its auth) is the page's to hear; a server without the route is not.
    if (this.#last && [401, 403].includes(refusal?.status as number)) this.#error(refusal!);
  }

  /** `error`, with the refusal's code, status and message (the state: the one drawn last). */
  #error(error: VerificationClientError): void {
    this.dispatchEvent(
      elementEvent('error', this.#last!, {
        error_code: error.code,
        status: error.status,
        message: this.describe(error),
      }),
    );
  }

  /** The module's `phone.defaultCountry`, as `GET /methods` says it (a server before it: RU, its default). */
  #serverCountry = 'RU';

  get #country(): string {
    return this.getAttribute('country') ?? this.#serverCountry;
  }

  #showMethods(methods: string[]): void {
    this.#offered = methods;
    renderMethods(this.#view, methods);
  }

  #refreshTexts(): void {
    // Not running yet: connecting renders the texts.
    if (!this.#unsubscribe) return;
    for (const [id, key] of [
      ['hint', 'phoneHint'],
      ['go', 'start'],
      ['check', 'check'],
      ['cancel', 'cancel'],
      ['again', 'again'],
    ] as const)
      this.#$(id).textContent = this.#texts.t(key);
    // The first label is the phone's (the methods' come after it).
    this.#root.querySelector('label')!.textContent = this.#texts.t('phone');
    this.#root.querySelector('legend')!.textContent = this.#texts.t('method');
    this.#showMethods(this.#offered);
    this.#task.reset();
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
      this.#localError = this.#texts.t('e_phone');
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
      this.#localError = this.#texts.t('e_codeFormat');
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
      this.#announce(
        (this.#notice = this.#texts.t('switched', { method: this.#texts.methodName(after.method) })),
      );
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

  /** The message of a refusal in the element's language. */
  describe(error: VerificationClientError, waitMs: number | null = null): string {
    return refusalText(error, waitMs, this.#texts);
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
      this.#error(error);
    }
    const message =
      this.#localError || (error && !this.#errorDismissed ? this.describe(error, s.retryInMs) : '');
    // A handle a reload left that the server no longer knows, or a cancel it did not hear of: nothing to say.
    const quiet = error?.code === 'not_found' || error?.code === 'no_verification' || phase === 'canceled';
    this.#$('start-error').textContent = idle && !quiet ? message : '';
    this.#$('task-error').textContent = idle || outcome ? '' : message;
    this.#$('outcome-error').textContent = outcome && error ? this.describe(error) : '';
    this.#$('go').setAttribute('aria-disabled', String(starting || (s.retryInMs ?? 0) > 0));

    if (!idle && !outcome && !starting) this.#task.show(s, !this.#errorDismissed);
    if (outcome) this.#task.showOutcome(s);

    // What changed: events, the live region and the focus follow the flow.
    if (prev && prev.phase !== phase) {
      if (outcome || phase === 'canceled')
        this.dispatchEvent(elementEvent(phase, s, error ? { error_code: error.code } : {}));
      if (outcome) this.#announce(this.#$('title').textContent ?? '');
    }
    if (!prev || prev.phase !== phase || prev.prompt?.kind !== prompt?.kind || prev.method !== s.method) {
      if (phase === 'awaiting_user' || phase === 'verifying') {
        this.#announce(
          [this.#notice, this.#$('screen').firstElementChild?.textContent].filter(Boolean).join(' '),
        );
      }
      const next = focusAfter(s);
      if (next) this.#focus$(next);
    } else if (idle && error && error !== prev.error && !quiet) this.#focus$(focusOnRefusal(error));
  }
}
