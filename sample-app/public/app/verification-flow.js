import { verificationApi } from './api.js';
import { describeProblem } from './error-messages.js';
import { formatDuration, formatPhoneNumber, h } from './format.js';
import { methodInfo } from './method-info.js';
import { methodScreen } from './method-screen.js';
import { serverClock } from './server-clock.js';

/** Where the verification in progress is kept, so that a reload resumes it (this tab only). */
const STORAGE_KEY = 'nestjs-phone-verification-demo:verification';
const LAST_METHOD_KEY = 'nestjs-phone-verification-demo:method';
const TERMINAL = new Set(['verified', 'expired', 'failed']);
const MAX_RETRY_DELAY_MS = 10_000;
const DEFAULT_WAIT_SECONDS = 30;
/** Fields of the start and status responses the page keeps. */
const KEPT_FIELDS = [
  'verification_id',
  'method',
  'status',
  'expires_at',
  'verified_at',
  'poll_interval_ms',
  'awaiting_code',
  'code_length',
  'code_length_min',
  'code_length_max',
  'number_to_call',
  'deep_link',
];
/** Methods where nothing is sent to resend: the user calls, or the operator asks. */
const NO_CODE_SENT = new Set(['reverse_flash_call', 'operator_id']);
const STATUS_WORDS = {
  sent: 'sent',
  delivered: 'delivered',
  verified: 'verified',
  expired: 'expired',
  failed: 'failed',
};

const byId = (id) => document.getElementById(id);

/**
 * The integrator's frontend: start, the method's own screen, status polling at
 * `poll_interval_ms`, code checks, countdowns, rate-limit waits and resuming after a reload.
 */
export class VerificationFlow {
  /** The verification on screen: the start response's fields, updated by status polls. */
  #current = null;
  #pollTimer = null;
  #pollFailures = 0;
  #attemptsLeft = null;
  /** operator_id: the operator accepted the code; the result follows. */
  #codeAccepted = false;
  #expiryPolled = false;
  #instructionsKey = '';
  #noticeKind = null;
  /** A refused start or check and, for a rate limit, until when (server clock, ms). */
  #startRefusal = null;
  #checkRefusal = null;

  constructor({ onPhoneNumber }) {
    this.onPhoneNumber = onPhoneNumber;
    this.el = {
      form: byId('start-form'),
      phone: byId('phone-input'),
      methods: byId('method-list'),
      startError: byId('start-error'),
      startButton: byId('start-button'),
      view: byId('verification'),
      method: byId('v-method'),
      phoneLabel: byId('v-phone'),
      status: byId('v-status'),
      notice: byId('v-notice'),
      instructions: byId('v-instructions'),
      codeForm: byId('code-form'),
      codeLabel: byId('code-label'),
      codeInput: byId('code-input'),
      checkButton: byId('check-button'),
      error: byId('v-error'),
      attempts: byId('v-attempts'),
      expiry: byId('v-expiry'),
      resend: byId('v-resend'),
      restart: byId('restart-button'),
      cancel: byId('cancel-button'),
      result: byId('result'),
      resultIcon: byId('result-icon'),
      resultTitle: byId('result-title'),
      resultText: byId('result-text'),
      again: byId('again-button'),
    };
    this.el.form.addEventListener('submit', (event) => this.#start(event));
    this.el.codeForm.addEventListener('submit', (event) => this.#check(event));
    // Typing again dismisses the last refusal; the attempts left stay on screen.
    this.el.codeInput.addEventListener('input', () => {
      if (this.#waitLeft(this.#checkRefusal) > 0) return;
      this.el.error.hidden = true;
      this.#render();
    });
    this.el.restart.addEventListener('click', () => this.#backToForm());
    this.el.cancel.addEventListener('click', () => this.#backToForm());
    this.el.again.addEventListener('click', () => this.#backToForm());
    setInterval(() => this.#tick(), 500);
  }

  /** Loads the methods and resumes a verification left by a reload, if any. */
  async init(mode) {
    if (mode === 'sandbox' && !this.el.phone.value) this.el.phone.value = '+7 912 345-67-89';
    const saved = this.#load();
    await this.#loadMethods(saved?.method);
    if (!saved) return this.#showForm();
    this.#show(saved);
    this.#showNotice('Welcome back: your verification continues where you left it.', 'resumed');
    await this.#poll();
  }

  /** The sandbox's clock moved: expiry and waits changed; look at the truth now. */
  clockMoved() {
    this.#tick();
    if (this.#current && !TERMINAL.has(this.#current.status)) this.#schedulePoll(0);
  }

  /* ------------------------------------------------------------------ start */

  async #loadMethods(preferred) {
    try {
      const { methods } = await verificationApi.methods();
      const wanted = preferred ?? sessionStorage.getItem(LAST_METHOD_KEY) ?? 'sms';
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
    } catch (problem) {
      this.el.methods.replaceChildren(h('p', { class: 'alert' }, describeProblem(problem, 'methods')));
    }
  }

  async #start(event) {
    event.preventDefault();
    if (this.#waitLeft(this.#startRefusal) > 0) return;
    const phoneNumber = this.el.phone.value.trim();
    const method = this.el.form.querySelector('input[name="method"]:checked')?.value;
    if (!phoneNumber) return this.#showStartError('Please enter your phone number.');
    if (!method) return this.#showStartError('Please choose how we should check your number.');
    this.#startRefusal = null;
    this.el.startError.hidden = true;
    this.el.startButton.disabled = true;
    try {
      const started = await verificationApi.start(phoneNumber, method);
      sessionStorage.setItem(LAST_METHOD_KEY, method);
      const current = { ...pick(started, KEPT_FIELDS), phone_number: started.phone_number };
      current.resend_available_at = started.resend_available_at ?? null;
      this.#save(current);
      this.#show(current);
      if (started.resumed)
        this.#showNotice(
          'You already had this verification in progress, so we continued it (nothing new was sent).',
          'resumed',
        );
      this.#schedulePoll();
    } catch (problem) {
      this.#startRefusal = refusal(problem);
      this.#renderStartRefusal();
    } finally {
      this.el.startButton.disabled = this.#waitLeft(this.#startRefusal) > 0;
    }
  }

  #showStartError(text) {
    this.el.startError.textContent = text;
    this.el.startError.hidden = false;
  }

  #renderStartRefusal() {
    const refused = this.#startRefusal;
    if (!refused) return;
    const wait = this.#waitLeft(refused);
    if (refused.until !== null && wait <= 0) {
      this.#startRefusal = null;
      this.el.startError.hidden = true;
      this.el.startButton.disabled = false;
      return;
    }
    this.#showStartError(describeProblem(refused.problem, 'start', refused.until === null ? null : wait));
    this.el.startButton.disabled = wait > 0;
  }

  /* ------------------------------------------------------------------ the verification on screen */

  #show(current) {
    this.#current = current;
    this.#attemptsLeft = null;
    this.#codeAccepted = false;
    this.#expiryPolled = false;
    this.#instructionsKey = '';
    this.#checkRefusal = null;
    this.#hideNotice();
    this.el.error.hidden = true;
    this.el.codeInput.value = '';
    this.el.form.hidden = true;
    this.el.result.hidden = true;
    this.el.view.hidden = false;
    this.onPhoneNumber(current.phone_number);
    this.#render();
    if (!this.el.codeForm.hidden) this.el.codeInput.focus();
  }

  #render() {
    const current = this.#current;
    const info = methodInfo(current.method);
    this.el.method.textContent = info.short;
    this.el.phoneLabel.textContent = formatPhoneNumber(current.phone_number);
    this.el.status.textContent = STATUS_WORDS[current.status] ?? current.status;
    this.el.status.dataset.status = current.status;
    this.#renderInstructions();

    const wasHidden = this.el.codeForm.hidden;
    const codeWanted = current.awaiting_code === true && !TERMINAL.has(current.status) && !this.#codeAccepted;
    this.el.codeForm.hidden = !codeWanted;
    // The exact length when the API gives it; else the bounds (operator_id's SMS fallback: 4 to 8).
    const length = current.code_length;
    const max = current.code_length_max ?? length ?? 8;
    this.el.codeInput.maxLength = max;
    this.el.codeInput.size = max + 2;
    this.el.codeInput.placeholder = '•'.repeat(length ?? 6);
    this.el.codeLabel.textContent = length
      ? `Enter the ${length}-digit code`
      : current.code_length_min && max
        ? `Enter the code (${current.code_length_min} to ${max} digits)`
        : 'Enter the code';
    if (codeWanted && wasHidden) this.el.codeInput.focus();

    this.el.attempts.hidden = this.#attemptsLeft === null || !codeWanted || !this.el.error.hidden;
    this.el.attempts.textContent =
      this.#attemptsLeft === null
        ? ''
        : `${this.#attemptsLeft} ${this.#attemptsLeft === 1 ? 'attempt' : 'attempts'} left`;
    this.#tick();
  }

  /** The method's own screen; rebuilt only when what it shows changes (the QR code does not flicker). */
  #renderInstructions() {
    const c = this.#current;
    const key = [c.method, c.awaiting_code, this.#codeAccepted, c.deep_link, c.number_to_call].join('|');
    if (key === this.#instructionsKey) return;
    this.#instructionsKey = key;
    this.el.instructions.replaceChildren(...methodScreen(c, this.#codeAccepted));
  }

  #showNotice(text, kind) {
    this.#noticeKind = kind;
    this.el.notice.textContent = text;
    this.el.notice.hidden = false;
  }

  #hideNotice(kind) {
    if (kind && this.#noticeKind !== kind) return;
    this.#noticeKind = null;
    this.el.notice.hidden = true;
  }

  /** Countdowns: expiry, the resend wait and rate-limit waits (server clock). */
  #tick() {
    this.#renderStartRefusal();
    const current = this.#current;
    if (!current || this.el.view.hidden) return;
    const now = serverClock.now();
    const left = Date.parse(current.expires_at) - now;
    if (TERMINAL.has(current.status)) this.el.expiry.textContent = '';
    else if (left > 0) this.el.expiry.textContent = `Expires in ${formatDuration(left)}`;
    else {
      this.el.expiry.textContent = 'Expired';
      // Ask the server once: it says whether the verification really is over.
      if (!this.#expiryPolled) {
        this.#expiryPolled = true;
        this.#schedulePoll(0);
      }
    }
    this.el.expiry.dataset.urgent = String(left < 30_000);

    const resendAt = current.resend_available_at ? Date.parse(current.resend_available_at) : null;
    const resendWait = resendAt === null ? 0 : resendAt - now;
    const sendsCode = !NO_CODE_SENT.has(current.method);
    this.el.resend.textContent =
      resendWait > 0
        ? `${sendsCode ? 'You can ask for a new code' : 'You can try again'} in ${formatDuration(resendWait)}`
        : '';
    this.el.restart.textContent = sendsCode
      ? 'Send a new code or use another method'
      : 'Try again or use another method';
    this.el.restart.disabled = resendWait > 0;

    const checkRefused = this.#checkRefusal;
    if (checkRefused?.until != null) {
      const wait = this.#waitLeft(checkRefused);
      if (wait > 0) {
        this.el.error.textContent = describeProblem(checkRefused.problem, 'check', wait);
        this.el.checkButton.disabled = true;
      } else {
        this.#checkRefusal = null;
        this.el.error.hidden = true;
        this.el.checkButton.disabled = false;
      }
    }
  }

  #waitLeft(refused) {
    return refused?.until == null ? 0 : refused.until - serverClock.now();
  }

  /* ------------------------------------------------------------------ code check */

  async #check(event) {
    event.preventDefault();
    const current = this.#current;
    if (!current || this.#waitLeft(this.#checkRefusal) > 0) return;
    const code = this.el.codeInput.value.replace(/[\s-]/g, '');
    const error = (text) => {
      this.el.error.textContent = text;
      this.el.error.hidden = false;
    };
    if (!/^\d+$/.test(code)) return error('Please enter the code as it arrived: digits only.');
    if (current.code_length && code.length !== current.code_length)
      return error(`The code has ${current.code_length} digits.`);
    if (
      current.code_length_min &&
      (code.length < current.code_length_min || code.length > current.code_length_max)
    )
      return error(`The code has ${current.code_length_min} to ${current.code_length_max} digits.`);
    this.el.checkButton.disabled = true;
    this.el.error.hidden = true;
    this.#checkRefusal = null;
    try {
      const result = await verificationApi.check(current.verification_id, code);
      if (this.#current !== current) return;
      this.#attemptsLeft = null;
      current.status = result.status;
      if (result.verified) return this.#finish('verified');
      // operator_id: the operator accepted the code; the outcome follows (status polls).
      this.#codeAccepted = true;
      this.#save(current);
      this.#render();
      this.#schedulePoll();
    } catch (problem) {
      if (this.#current !== current) return;
      this.#checkRefusal = refusal(problem);
      if (problem.code === 'invalid_code') {
        const left = problem.body.attempts_remaining;
        this.#attemptsLeft = typeof left === 'number' ? left : this.#attemptsLeft;
        this.el.codeInput.value = '';
        this.el.codeInput.focus();
        if (left === 0) this.#schedulePoll(0);
      }
      if (problem.code === 'not_found') return this.#finish('lost');
      if (problem.code === 'not_pending') this.#schedulePoll(0);
      error(
        describeProblem(
          problem,
          'check',
          this.#checkRefusal.until === null ? null : this.#waitLeft(this.#checkRefusal),
        ),
      );
      this.#render();
    } finally {
      this.el.checkButton.disabled = this.#waitLeft(this.#checkRefusal) > 0;
    }
  }

  /* ------------------------------------------------------------------ status polling */

  #schedulePoll(delayMs) {
    clearTimeout(this.#pollTimer);
    if (!this.#current) return;
    this.#pollTimer = setTimeout(() => void this.#poll(), delayMs ?? this.#current.poll_interval_ms);
  }

  async #poll() {
    const current = this.#current;
    if (!current) return;
    try {
      const status = await verificationApi.status(current.verification_id);
      if (this.#current !== current) return;
      this.#pollFailures = 0;
      this.#hideNotice('connection');
      Object.assign(current, pick(status, KEPT_FIELDS));
      this.#save(current);
      if (TERMINAL.has(current.status)) return this.#finish(current.status);
      if (Date.parse(current.expires_at) > serverClock.now()) this.#expiryPolled = false;
      this.#render();
      this.#schedulePoll(current.poll_interval_ms);
    } catch (problem) {
      if (this.#current !== current) return;
      if (problem.code === 'not_found') return this.#finish('lost');
      this.#pollFailures += 1;
      const delay =
        problem.code === 'rate_limit_exceeded' && problem.retryAfterSeconds !== null
          ? problem.retryAfterSeconds * 1000
          : Math.min(MAX_RETRY_DELAY_MS, current.poll_interval_ms * 2 ** this.#pollFailures);
      this.#showNotice(`${describeProblem(problem, 'status')} We keep checking.`, 'connection');
      this.#schedulePoll(delay);
    }
  }

  /* ------------------------------------------------------------------ the end */

  #finish(outcome) {
    clearTimeout(this.#pollTimer);
    const current = this.#current;
    this.#current = null;
    sessionStorage.removeItem(STORAGE_KEY);
    const phone = formatPhoneNumber(current.phone_number);
    const texts = {
      verified: [
        '✓',
        'Your number is verified',
        `${phone} is confirmed. Your backend received the verified event and updated your account.`,
      ],
      failed: [
        '✕',
        "We couldn't verify your number",
        this.#attemptsLeft === 0
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
    this.el.view.hidden = true;
    this.el.form.hidden = true;
    this.el.result.hidden = false;
  }

  #backToForm() {
    const current = this.#current;
    clearTimeout(this.#pollTimer);
    this.#current = null;
    sessionStorage.removeItem(STORAGE_KEY);
    if (current) {
      this.el.phone.value = formatPhoneNumber(current.phone_number);
      const radio = this.el.form.querySelector(`input[name="method"][value="${CSS.escape(current.method)}"]`);
      if (radio) radio.checked = true;
    }
    this.#showForm();
  }

  #showForm() {
    this.el.view.hidden = true;
    this.el.result.hidden = true;
    this.el.form.hidden = false;
  }

  #save(current) {
    sessionStorage.setItem(STORAGE_KEY, JSON.stringify(current));
  }

  #load() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null');
      return saved && typeof saved.verification_id === 'string' && typeof saved.expires_at === 'string'
        ? saved
        : null;
    } catch {
      return null;
    }
  }
}

/** A refused request and, for a rate limit, the server-clock instant the wait ends. */
function refusal(problem) {
  const until =
    problem.code === 'rate_limit_exceeded'
      ? serverClock.now() + (problem.retryAfterSeconds ?? DEFAULT_WAIT_SECONDS) * 1000
      : null;
  return { problem, until };
}

function pick(source, fields) {
  const out = {};
  for (const field of fields) if (source[field] !== undefined) out[field] = source[field];
  return out;
}
