import { demoApi } from './api.js';
import { formatTime, h } from './format.js';

/**
 * The host side, live: every verification event the backend's listeners received (server-sent
 * events from `/demo/events`) and the demo user's verified numbers, which only the listener writes.
 */
export class HostEvents {
  #seen = new Set();

  constructor() {
    this.list = document.getElementById('host-events');
    this.numbers = document.getElementById('verified-numbers');
  }

  start() {
    const source = new EventSource('/demo/events');
    source.addEventListener('host-event', (message) => this.#add(JSON.parse(message.data)));
    void this.#refreshAccount();
  }

  #add(entry) {
    // A reconnecting stream replays what was already shown.
    if (this.#seen.has(entry.id)) return;
    this.#seen.add(entry.id);
    this.list.querySelector('.events-empty')?.remove();
    this.list.prepend(
      h(
        'li',
        { class: 'event', 'data-event': entry.event },
        h(
          'div',
          { class: 'event-head' },
          h('span', { class: 'event-name' }, entry.event),
          h('time', { datetime: entry.received_at }, formatTime(entry.received_at)),
        ),
        h(
          'div',
          {},
          `${entry.phone_number} · ${entry.method} · ${entry.status} · learned from the ${entry.source}`,
        ),
        h('div', { class: 'event-handled' }, `→ ${entry.handled_by}`),
      ),
    );
    if (entry.event === 'verification.verified') void this.#refreshAccount();
  }

  async #refreshAccount() {
    try {
      const { verified_numbers: numbers } = await demoApi.account();
      this.numbers.replaceChildren(
        ...(numbers.length === 0
          ? [h('li', { class: 'muted' }, 'None yet.')]
          : numbers.map((n) =>
              h(
                'li',
                { 'data-verified-number': n.phone_number },
                h('strong', {}, n.phone_number),
                ` verified by ${n.method} at ${formatTime(n.verified_at)}`,
              ),
            )),
      );
    } catch {
      // Shown again with the next verified event.
    }
  }
}
