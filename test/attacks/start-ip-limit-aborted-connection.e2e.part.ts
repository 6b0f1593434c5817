/**
 * Attack (protection's per-client start limit, `limits.startPerIp`: "starts per client key", the client key
 * being the client's IP unless the host keys clients itself): a client that sends a start and resets its
 * connection at once. Express's `req.ip` and Fastify's `request.ip` read the socket's address, which a reset
 * socket no longer has: the route sees no IP, and a start without one is taken for the host's own call
 * (no client key: the per-client limit does not apply; no address or network: no free-budget key, no figure
 * share). The attacker needs no answer to make the host pay (an SMS pumping farm does not read them).
 *
 * Here: a host with `startPerIp` 2 an hour, a client on 127.0.0.1 with no owner. Each of its starts is an SMS
 * to a number of its own in a range of its own; each request is written whole, then the socket reset. The
 * API is asked for a session each time: 6 SMS for a client whose limit is 2 (checked: the same 6 starts over
 * kept connections: 2 sessions, then 429 start_ip_limit).
 *
 * Expected: a route request whose client address cannot be read is metered (one shared key for all such
 * requests, say), never taken for the host's own call: at most 2 sessions. High (the per-IP start limit
 * is the first meter of paid starts; only per-number limits, the pumping defence and the spend cap remain).
 * On main: 6 sessions on Express and Fastify; now 2 (a reset TCP connection's requests share the address
 * `connection-reset`). Not covered: a host on a Unix socket whose proxy is not trusted gives no IP at all.
 */
import { connect } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture, journeyHost, sessionIds } from '../journeys/journey-host.js';

/** A start written whole on a connection of its own, which is reset as soon as it is written. */
function abortedStart(url: string, phone: string): Promise<void> {
  const { port } = new URL(url);
  const body = JSON.stringify({ phone_number: phone, method: 'sms' });
  return new Promise((resolve) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /verification/start HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        () => {
          socket.resetAndDestroy();
          resolve();
        },
      );
    });
    socket.on('error', () => undefined);
  });
}

describe.each(PLATFORMS)(
  'the per-client start limit and a connection reset after its start (%s)',
  (platform) => {
    const fx = journeyFixture();

    it('6 SMS starts from one client whose connections are reset reach the API at most twice (startPerIp 2)', async () => {
      const host = await journeyHost(fx, platform, {
        owner: () => undefined,
        limits: { startPerIp: { points: 2, windowMs: 3_600_000 }, pumping: false, spendCap: false },
      });
      const phones = Array.from(
        { length: 6 },
        (_, i) => `+7916${i}${String(process.pid % 100).padStart(2, '0')}0001`,
      );
      for (const phone of phones) {
        await abortedStart(host.url, phone);
        // The host finishes the start it was sent (no sleep: the sandbox answers as soon as asked).
        for (let wait = 0; wait < 200 && sessionIds(fx.sb, phone).length === 0; wait++)
          await new Promise((r) => setImmediate(r));
      }
      await fx.sb.advance(1_000);
      const sent = phones.filter((phone) => sessionIds(fx.sb, phone).length > 0);
      expect(sent.length).toBeLessThanOrEqual(2);
    }, 60_000);
  },
);
