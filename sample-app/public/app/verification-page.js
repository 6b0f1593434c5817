import { createVerificationClient, detectDevice } from '/client/index.js';
import { describeProblem } from './error-messages.js';
import { formatDuration, formatPhoneNumber, h } from './format.js';
import { methodInfo } from './method-info.js';
import { methodScreen } from './method-screen.js';
import { serverClock } from './server-clock.js';

const LAST_METHOD_KEY = 'nestjs-phone-verification-demo:method';
/** Methods where nothing is sent to resend: the user calls, or the operator asks. */
const NO_CODE_SENT = new Set(['reverse_flash_call', 'operator_id']);
const OUTCOMES = new Set(['verified', 'failed', 'expired']);

const byId = (id) => document.getElementById(id);

/**
 * The integrator's frontend, drawn from the state of `nestjs-phone-verification/client`: the
 * client runs start, check, the status stream (or polling), countdowns, waits and resume; this
 * page only shows its state in words and forwards the user's clicks.
 */
export class VerificationPage {
  /** The method's screen is rebuilt only when what it shows changes (the QR code does not flicker). */
  #screenKey = '';
  /** The user typed since the last refusal: it is hidden until the next one. */
  #errorDismissed = false;
  #checking = false;
  #switching = false;
  #deepLink = null;
  #notice = null;

  constructor({ onPhoneNumber }) {
    this.onPhoneNumber = onPhoneNumber;
    const params = new URLSearchParams(location.search);
    this.client = createVerificationClient({
      // `?transport=polling`: as a browser without EventSource (the sample's tests run both ways).
      eventSource: params.get('transport') === 'polling' ? null : undefined,
      // The module's clock (the sandbox's, which time travel moves), as /demo/info tells it.
      serverNow: () => serverClock.now(),
    });
    this.el = Object.fromEntries(
      [
        ['form', 'start-form'],
        ['phone', 'phone-input'],
        ['methods', 'method-list'],
        ['startError', 'start-error'],
        ['startButton', 'start-button'],
        ['view', 'verification'],
        ['method', 'v-method'],
        ['phoneLabel', 'v-phone'],
        ['status', 'v-status'],
        ['notice', 'v-notice'],
        ['instructions', 'v-instructions'],
        ['codeForm', 'code-form'],
        ['codeLabel', 'code-label'],
        ['codeInput', 'code-input'],
        ['checkButton', 'check-button'],
        ['error', 'v-error'],
        ['attempts', 'v-attempts'],
        ['expiry', 'v-expiry'],
        ['resend', 'v-resend'],
        ['fallback', 'v-fallback'],
        ['switch', 'switch-button'],
        ['resultSwitch', 'result-switch-button'],
        ['restart', 'restart-button'],
        ['cancel', 'cancel-button'],
        ['result', 'result'],
        ['resultIcon', 'result-icon'],
        ['resultTitle', 'result-title'],
        ['resultText', 'result-text'],
        ['again', 'again-button'],
      ].map(([key, id]) => [key, byId(id)]),
    );
    this.el.form.addEventListener('submit', (event) => this.#start(event));
    this.el.codeForm.addEventListener('submit', (event) => this.#check(event));
    this.el.codeInput.addEventListener('input', () => {
      this.#errorDismissed = true;
      this.#render(this.client.getState());
    });
    this.el.switch.addEventListener('click', () => this.#switchMethod());
    this.el.resultSwitch.addEventListener('click', () => this.#switchMethod());
    this.el.restart.addEventListener('click', () => this.#backToForm());
    this.el.cancel.addEventListener('click', () => this.#backToForm());
    this.el.again.addEventListener('click', () => this.#backToForm());
    this.client.subscribe((state) => this.#render(state));
  }

  /** Loads the methods and resumes a verification left by a reload, if any. */
  async init(mode) {
    if (mode === 'sandbox' && !this.el.phone.value) this.el.phone.value = '+7 912 345-67-89';
    await this.#loadMethods();
    if (await this.client.resume())
      this.#notice = 'Welcome back: your verification continues where you left it.';
    this.#render(this.client.getState());
  }

  /** The sandbox's clock moved: expiry and waits changed; look at the truth now. */
  clockMoved() {
    this.client.refresh();
  }

  /** Something happened on the (simulated) phone: look at the truth now. */
  refresh() {
    this.client.refresh();
  }

  async #loadMethods() {
    try {
      const response = await fetch('/verification/methods', { headers: { accept: 'application/json' } });
      const { methods } = await response.json();
      const wanted = sessionStorage.getItem(LAST_METHOD_KEY) ?? 'sms';
      const chosen = methods.some((m) => m.method === wanted) ? wanted : methods[0]?.method;
      this.el.methods.replaceChildren(
        ...methods.map(({ method }) => {
          const info = methodInfo(method);
          return h(
            'label',
            { class: 'method-option', 'data-method': method },
            h('input', { type: 'radio', name: 'method', value: method, checked: method === chosen }),
            h('span', { class: 'method-title' }, info.title),
            h('span', { class: 'method-description' }, info.description),
          );
        }),
      );
    } catch {
      this.el.methods.replaceChildren(
        h('p', { class: 'alert' }, describeProblem({ code: 'network_error' }, 'methods')),
      );
    }
  }

  async #start(event) {
    event.preventDefault();
    const phoneNumber = this.el.phone.value.trim();
    const method = this.el.form.querySelector('input[name="method"]:checked')?.value;
    if (!phoneNumber) return this.#showStartError('Please enter your phone number.');
    if (!method) return this.#showStartError('Please choose how we should check your number.');
    sessionStorage.setItem(LAST_METHOD_KEY, method);
    this.#notice = null;
    // The device hint lets the module's policy leave out what this device cannot do when it chooses.
    const state = await this.client.start({ phoneNumber, method, device: detectDevice() });
    if (state.resumed && state.verificationId)
      this.#notice =
        'You already had this verification in progress, so we continued it (nothing new was sent).';
    this.#render(this.client.getState());
  }

  async #check(event) {
    event.preventDefault();
    const state = this.client.getState();
    const prompt = state.prompt;
    if (prompt?.kind !== 'code' || state.retryInMs) return;
    const code = this.el.codeInput.value.replace(/[\s-]/g, '');
    const refuse = (text) => {
      this.el.error.textContent = text;
      this.el.error.hidden = false;
    };
    if (!/^\d+$/.test(code)) return refuse('Please enter the code as it arrived: digits only.');
    if (code.length < prompt.minLength || code.length > prompt.maxLength)
      return refuse(
        prompt.length
          ? `The code has ${prompt.length} digits.`
          : `The code has ${prompt.minLength} to ${prompt.maxLength} digits.`,
      );
    this.#errorDismissed = false;
    this.#checking = true;
    try {
      await this.client.check(code);
    } finally {
      this.#checking = false;
    }
    if (this.client.getState().error?.code === 'invalid_code') {
      this.el.codeInput.value = '';
      this.el.codeInput.focus();
    }
    this.#render(this.client.getState());
  }

  /** "Try another way": the next method the server's policy offers, for the same verification. */
  async #switchMethod() {
    const before = this.client.getState().method;
    this.#switching = true;
    this.#errorDismissed = false;
    this.#render(this.client.getState());
    try {
      await this.client.switchMethod();
    } finally {
      this.#switching = false;
    }
    const state = this.client.getState();
    if (state.method !== before) {
      this.#notice = `Trying another way: ${methodInfo(state.method).title}.`;
      this.#deepLink = null;
    }
    this.#render(state);
  }

  #showStartError(text) {
    this.el.startError.textContent = text;
    this.el.startError.hidden = false;
  }

  #render(state) {
    const { phase } = state;
    this.el.startButton.disabled = phase === 'starting' || (phase !== 'awaiting_user' && state.retryInMs > 0);
    if (phase === 'idle' || phase === 'canceled' || phase === 'starting') return this.#renderForm(state);
    if (OUTCOMES.has(phase)) return this.#renderOutcome(state);
    this.#renderVerification(state);
  }

  #renderForm(state) {
    this.el.view.hidden = true;
    this.el.result.hidden = true;
    this.el.form.hidden = false;
    const error = state.error;
    // A handle the server no longer knows, from a reload: nothing to say, start afresh. Canceled: a
    // cancel the server did not hear of is stopped here all the same (the session runs out).
    if (
      !error ||
      error.code === 'not_found' ||
      error.code === 'no_verification' ||
      state.phase === 'canceled'
    )
      this.el.startError.hidden = true;
    else this.#showStartError(describeProblem(error, 'start', state.retryInMs));
  }

  #renderVerification(state) {
    const wasHidden = this.el.view.hidden;
    this.el.form.hidden = true;
    this.el.result.hidden = true;
    this.el.view.hidden = false;
    if (wasHidden) {
      this.#screenKey = '';
      this.#errorDismissed = false;
      this.el.codeInput.value = '';
      this.onPhoneNumber(state.phoneNumber);
    }
    const prompt = state.prompt;
    if (prompt?.kind === 'link') this.#deepLink = prompt.deepLink;
    this.el.method.textContent = methodInfo(state.method).short;
    this.el.phoneLabel.textContent = formatPhoneNumber(state.phoneNumber);
    this.el.status.textContent = state.status;
    this.el.status.dataset.status = state.status;
    this.el.notice.textContent = this.#notice ?? '';
    this.el.notice.hidden = !this.#notice;

    // operator_id after a code: accepted, the operator's verdict follows.
    const accepted = state.phase === 'verifying' && !this.#checking;
    const view = {
      method: state.method,
      phone_number: state.phoneNumber,
      awaiting_code: prompt?.kind === 'code',
      code_length: prompt?.kind === 'code' ? prompt.length : undefined,
      number_to_call: prompt?.kind === 'call' ? prompt.numberToCall : undefined,
      deep_link: this.#deepLink,
    };
    const key = [
      view.method,
      view.awaiting_code,
      accepted,
      view.deep_link,
      view.number_to_call,
      state.verificationId,
    ].join('|');
    if (state.phase === 'awaiting_user' || accepted) {
      if (key !== this.#screenKey) this.el.instructions.replaceChildren(...methodScreen(view, accepted));
      this.#screenKey = key;
    }

    const codeWanted = prompt?.kind === 'code' || (state.phase === 'verifying' && this.#checking);
    const focusCode = codeWanted && this.el.codeForm.hidden;
    this.el.codeForm.hidden = !codeWanted;
    if (prompt?.kind === 'code') {
      this.el.codeInput.maxLength = prompt.maxLength;
      this.el.codeInput.size = prompt.maxLength + 2;
      this.el.codeInput.placeholder = '•'.repeat(prompt.length ?? 6);
      this.el.codeLabel.textContent = prompt.length
        ? `Enter the ${prompt.length}-digit code`
        : `Enter the code (${prompt.minLength} to ${prompt.maxLength} digits)`;
      if (focusCode) this.el.codeInput.focus();
    }
    this.el.checkButton.disabled = this.#checking || state.retryInMs > 0;

    const error = state.error;
    const errorShown = !!error && (!this.#errorDismissed || state.retryInMs > 0);
    if (errorShown) this.el.error.textContent = describeProblem(error, 'check', state.retryInMs);
    this.el.error.hidden = !errorShown;
    const left = state.attemptsRemaining;
    this.el.attempts.hidden = left === null || !codeWanted || errorShown;
    this.el.attempts.textContent = left === null ? '' : `${left} ${left === 1 ? 'attempt' : 'attempts'} left`;

    this.el.expiry.textContent =
      state.expiresInMs > 0
        ? `Expires in ${formatDuration(state.expiresInMs)}`
        : state.expiresInMs === 0
          ? 'Expired'
          : '';
    this.el.expiry.dataset.urgent = String(state.expiresInMs !== null && state.expiresInMs < 30_000);
    const sendsCode = !NO_CODE_SENT.has(state.method);
    this.el.resend.textContent =
      state.resendInMs > 0
        ? `${sendsCode ? 'You can ask for a new code' : 'You can try again'} in ${formatDuration(state.resendInMs)}`
        : '';
    this.el.restart.textContent = sendsCode
      ? 'Send a new code or use another method'
      : 'Try again or use another method';
    this.el.restart.disabled = state.resendInMs > 0;

    // "Try another way" once the server says so (fallback_available_at); a server without journeys never does.
    this.el.fallback.textContent =
      state.fallbackInMs > 0 && state.switchMethods.length
        ? `You can try another way in ${formatDuration(state.fallbackInMs)}`
        : '';
    this.el.switch.hidden = !state.canSwitch;
    this.el.switch.disabled = this.#switching;
  }

  #renderOutcome(state) {
    // The refusal that ended it (a last wrong code) stays in words beside the outcome.
    if (state.error && state.error.code !== 'not_found')
      this.el.error.textContent = describeProblem(state.error, 'check');
    this.el.error.hidden = !state.error || state.error.code === 'not_found';
    const phone = formatPhoneNumber(state.phoneNumber);
    const lost = state.error?.code === 'not_found';
    const outcome = lost ? 'lost' : state.phase;
    const texts = {
      verified: [
        '✓',
        'Your number is verified',
        `${phone} is confirmed. Your backend received the verified event and updated your account.`,
      ],
      failed: [
        '✕',
        "We couldn't verify your number",
        state.attemptsRemaining === 0
          ? 'Too many wrong codes were entered. Please start again.'
          : 'The verification could not be completed. Please start again or choose another method.',
      ],
      expired: ['!', 'The verification expired', "It wasn't completed in time. Please start again."],
      lost: ['?', "This verification can't be found any more", 'Please start again.'],
    };
    const [icon, title, text] = texts[outcome];
    this.el.result.dataset.outcome = outcome;
    this.el.resultIcon.textContent = icon;
    this.el.resultTitle.textContent = title;
    this.el.resultText.textContent = text;
    this.el.again.textContent = outcome === 'verified' ? 'Verify another number' : 'Start again';
    // A method that failed or expired: another one may still verify the number, without starting over.
    this.el.resultSwitch.hidden = !state.canSwitch || lost;
    this.el.resultSwitch.disabled = this.#switching;
    this.el.view.hidden = true;
    this.el.form.hidden = true;
    this.el.result.hidden = false;
  }

  #backToForm() {
    const { method, phoneNumber } = this.client.getState();
    // Stops here at once; the server's answer comes later (a failure leaves the local stop).
    void this.client.cancel();
    this.#notice = null;
    this.#deepLink = null;
    if (phoneNumber && !phoneNumber.includes('*')) this.el.phone.value = formatPhoneNumber(phoneNumber);
    const radio = method && this.el.form.querySelector(`input[name="method"][value="${CSS.escape(method)}"]`);
    if (radio) radio.checked = true;
    this.#render(this.client.getState());
  }
}
