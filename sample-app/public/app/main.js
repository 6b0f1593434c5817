import { HostEvents } from './host-events.js';
import { serverClock } from './server-clock.js';
import { SimulatedPhone } from './simulated-phone.js';
import { VerificationPage } from './verification-page.js';

/** Wires the page: the mode banner, the verification, the simulated phone (sandbox) and the host's events. */
async function main() {
  let mode = 'live';
  try {
    mode = await serverClock.sync();
  } catch {
    // Without /demo/info the page still verifies; it just assumes live mode.
  }
  showMode(mode);

  const phone =
    mode === 'sandbox'
      ? new SimulatedPhone({
          onClockMoved: () => clockMoved(),
          // The status stream hears of a change the module observes; with webhooks on, a change the
          // API announces by no webhook (a bot's code sent after the share) would wait for the lazy
          // reconciler. The simulated phone knows it acted: the page asks once.
          onActed: () => flow.refresh(),
        })
      : null;
  const flow = new VerificationPage({ onPhoneNumber: (number) => phone?.watch(number) });
  async function clockMoved() {
    await serverClock.sync();
    flow.clockMoved();
  }
  phone?.show();
  new HostEvents().start();
  await flow.init(mode);
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
