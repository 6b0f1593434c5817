import { HostEvents } from './host-events.js';
import { serverClock } from './server-clock.js';
import { SimulatedPhone } from './simulated-phone.js';

/**
 * Wires the page: the mode banner, the verification (`<phone-verification>`, the package's element,
 * as a host would use it), the simulated phone (sandbox) and the host's events.
 */
async function main() {
  let mode = 'live';
  try {
    mode = await serverClock.sync();
  } catch {
    // Without /demo/info the page still verifies; it just assumes live mode.
  }
  showMode(mode);

  const element = document.querySelector('phone-verification');
  const polling = new URLSearchParams(location.search).get('transport') === 'polling';
  // Set before the element is defined, so that the client it makes has them: the module's clock (the
  // sandbox's, which time travel moves, as /demo/info tells it), and `?transport=polling` as a browser
  // without EventSource (the sample's tests run both ways).
  element.clientOptions = { serverNow: () => serverClock.now(), ...(polling ? { eventSource: null } : {}) };
  await import('/element/index.js');

  const phone =
    mode === 'sandbox'
      ? new SimulatedPhone({
          // The sandbox's clock moved: expiry and waits changed; look at the truth now.
          onClockMoved: async () => {
            await serverClock.sync();
            element.client.refresh();
          },
          // The status stream hears of a change the module observes; with webhooks on, a change the
          // API announces by no webhook (a bot's code sent after the share) would wait for the lazy
          // reconciler. The simulated phone knows it acted: the page asks once.
          onActed: () => element.client.refresh(),
        })
      : null;
  // The phone of the number being verified (E.164 after a start, and after a reload).
  element.client.subscribe((state) => {
    if (state.phoneNumber && state.phase !== 'idle') phone?.watch(state.phoneNumber);
  });
  phone?.show();
  new HostEvents().start();
  document.body.dataset.ready = 'true';
}

function showMode(mode) {
  const badge = document.getElementById('mode-badge');
  const note = document.getElementById('mode-note');
  if (mode === 'sandbox') {
    badge.textContent = 'Sandbox mode';
    note.textContent =
      'Sandbox mode: no real SMS or calls and nothing is charged. The simulated phone shows what the ' +
      "user's phone would receive; act on it as the user would.";
  } else {
    badge.textContent = 'Live mode';
    badge.classList.add('live');
    note.textContent = 'Live mode: real messages and calls to real phones; each verification is charged.';
  }
  badge.hidden = false;
  note.hidden = false;
}

void main();
