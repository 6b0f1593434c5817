import { demoApi } from './api.js';
import { formatPhoneNumber, h } from './format.js';
import { methodInfo } from './method-info.js';

const REFRESH_MS = 1000;
const APP_NAMES = {
  sms: 'Messages',
  messenger1: 'Messenger 1',
  messenger2: 'Messenger 2 · Verify bot',
  calls: 'Phone',
  dialer: 'Phone',
  operator: 'Your mobile operator',
};
const ACTION_LABELS = {
  deliver: 'Deliver now',
  share: 'Share my phone number',
  call: 'Call',
  approve: 'Approve',
  deny: 'Deny',
  fallback: "Push can't reach this SIM (SMS fallback)",
};

/**
 * Sandbox mode only: the end user's phone. It shows what the phone receives (read from the
 * sandbox through the sample's `/demo/phone` proxy) and lets the person act as the user would.
 */
export class SimulatedPhone {
  #phoneNumber = null;
  #timer = null;
  #run = 0;
  #busy = false;
  /** The last refused action, shown on its session until another action succeeds. */
  #actionError = null;

  constructor({ onClockMoved, onActed }) {
    this.screen = document.getElementById('phone-screen');
    this.numberLabel = document.getElementById('phone-number');
    this.onClockMoved = onClockMoved;
    this.onActed = onActed;
    for (const button of document.querySelectorAll('[data-advance-ms]'))
      button.addEventListener('click', () => this.#advance(Number(button.dataset.advanceMs), button));
  }

  show() {
    document.getElementById('phone-column').hidden = false;
  }

  /** The number whose phone this is (E.164), from the verification on screen. */
  watch(phoneNumber) {
    if (phoneNumber === this.#phoneNumber) return;
    this.#phoneNumber = phoneNumber;
    this.numberLabel.textContent = formatPhoneNumber(phoneNumber);
    clearTimeout(this.#timer);
    void this.#refresh();
  }

  async #refresh() {
    clearTimeout(this.#timer);
    // Only the latest refresh schedules the next one: one loop, however often this is called.
    const run = ++this.#run;
    const number = this.#phoneNumber;
    if (!number) return;
    try {
      const { items } = await demoApi.phone(number);
      if (run === this.#run && !this.#busy) this.#render(items);
    } catch {
      // The next refresh tries again; the phone simply shows its last screen meanwhile.
    }
    if (run === this.#run) this.#timer = setTimeout(() => void this.#refresh(), REFRESH_MS);
  }

  #render(items) {
    if (items.length === 0) {
      this.screen.replaceChildren(h('p', { class: 'phone-empty' }, 'Nothing has arrived on this phone yet.'));
      return;
    }
    this.screen.replaceChildren(...items.map((item) => this.#renderItem(item)));
  }

  #renderItem(item) {
    const header = h(
      'div',
      { class: 'phone-app' },
      h('span', { class: 'app-dot', 'data-app': item.app }),
      APP_NAMES[item.app] ?? item.app,
    );
    return h(
      'article',
      {
        class: 'phone-item',
        'data-state': item.state,
        'data-method': item.method,
        'data-status': item.status,
      },
      header,
      ...this.#body(item),
      this.#actionError?.sessionId === item.session_id
        ? h('p', { class: 'phone-error', role: 'alert' }, this.#actionError.text)
        : null,
      item.actions.length > 0
        ? h(
            'div',
            { class: 'phone-actions' },
            item.actions.map((action) =>
              h(
                'button',
                {
                  type: 'button',
                  'data-action': action,
                  onclick: (event) => this.#act(item.session_id, action, event),
                },
                ACTION_LABELS[action] ?? action,
              ),
            ),
          )
        : null,
    );
  }

  #body(item) {
    const code = (value) => h('span', { class: 'phone-code', 'data-code': value }, value);
    switch (item.state) {
      case 'waiting':
        return [
          h('p', { class: 'muted' }, `${methodInfo(item.method).short}: on its way through the network…`),
        ];
      case 'code':
        if (item.app === 'messenger2')
          return [h('p', {}, 'Thanks! Your verification code: ', code(item.code))];
        return [h('p', {}, 'Your verification code: ', code(item.code), '. Do not share it with anyone.')];
      case 'missed_call': {
        const number = item.incoming_number ?? '';
        const cut = number.length - item.code_length;
        return [
          h(
            'p',
            {},
            'Missed call from ',
            h(
              'span',
              { class: 'phone-code', 'data-incoming-number': number },
              number.slice(0, cut),
              h('span', { class: 'caller-code' }, number.slice(cut)),
            ),
          ),
          h('p', { class: 'muted' }, `Its last ${item.code_length} digits are the code.`),
        ];
      }
      case 'dial':
        return [
          h(
            'p',
            {},
            'Dial ',
            h(
              'strong',
              { 'data-number-to-call': item.number_to_call },
              formatPhoneNumber(item.number_to_call),
            ),
            ' as the website asks.',
          ),
        ];
      case 'share_prompt':
        return [
          h('p', {}, 'Hi! I am the verification bot. Share your phone number and I will send you a code.'),
        ];
      case 'push':
        return [
          h('p', {}, 'A website asks us to confirm that this SIM card is yours. Is it you signing in?'),
        ];
      case 'confirming':
        return [
          item.code ? h('p', {}, 'Your verification code: ', code(item.code)) : null,
          h('p', { class: 'muted' }, 'Code accepted: the operator is confirming…'),
        ];
      default:
        return [h('p', {}, `${methodInfo(item.method).short}: ${item.status}`)];
    }
  }

  async #act(sessionId, action, event) {
    const button = event.currentTarget;
    this.#busy = true;
    button.disabled = true;
    try {
      await demoApi.act(sessionId, action);
      this.#actionError = null;
      this.onActed?.();
    } catch (problem) {
      this.#actionError = { sessionId, text: problem.message };
    } finally {
      this.#busy = false;
      await this.#refresh();
    }
  }

  async #advance(ms, button) {
    button.disabled = true;
    try {
      await demoApi.advanceClock(ms);
      await this.onClockMoved();
    } finally {
      button.disabled = false;
    }
    await this.#refresh();
  }
}
