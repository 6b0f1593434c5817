import { demoApi } from './api.js';

/**
 * The server's clock as seen from the page: expiry and waits are instants of the server's clock
 * (in sandbox mode the sandbox's, which time travel moves), so countdowns use it, not the browser's.
 */
class ServerClock {
  offsetMs = 0;

  /** Reads the server's time; returns the sample's mode ('sandbox' or 'live'). */
  async sync() {
    const sentAt = Date.now();
    const info = await demoApi.info();
    const receivedAt = Date.now();
    this.offsetMs = info.now - (sentAt + receivedAt) / 2;
    return info.mode;
  }

  now() {
    return Date.now() + this.offsetMs;
  }
}

export const serverClock = new ServerClock();
