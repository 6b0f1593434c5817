/**
 * A start the API answers without `expires_at` (the field left out of an answer): the session lives
 * the host's `expirySeconds` from the start, else the API's default of 5 minutes. The start's answer
 * is built from the record, on the sandbox's frozen clock. The host's `expirySeconds` is what the API is
 * asked for: its session ends when the answer says.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import { nextPhone, startHost } from '../webhooks/harness.js';

describe.each(PLATFORMS)('client routes: a start answered without expires_at (%s)', (platform) => {
  const suite = sandboxSuite();
  afterEach(() => suite.sb.clearFaults());

  it.each([
    [undefined, 300],
    [120, 120],
  ])('expirySeconds %j: the session expires %j s after the start', async (expirySeconds, seconds) => {
    const sb = suite.sb;
    const host = await suite.boot(() =>
      startHost(platform, sb, {
        receiveWebhooks: false,
        module: { expirySeconds, reconcile: { enabled: false } },
      }),
    );
    sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'expires_at', value: null });
    const at = sb.now();
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    expect(res.status).toBe(201);
    expect(Date.parse(res.body.expires_at as string)).toBe(at + seconds * 1000);
  });

  it.each([
    [undefined, 300],
    [120, 120],
  ])(
    'expirySeconds %j is asked of the API: its session and the answer both end %j s after the start',
    async (expirySeconds, seconds) => {
      const sb = suite.sb;
      const host = await suite.boot(() =>
        startHost(platform, sb, {
          receiveWebhooks: false,
          module: { expirySeconds, reconcile: { enabled: false } },
        }),
      );
      const phone = nextPhone();
      const res = await call(host.url, 'POST', '/verification/start', { phone_number: phone, method: 'sms' });
      expect(res.status).toBe(201);
      const upstream = sb.sessionsFor(phone)[0]!;
      expect(Date.parse(upstream.expires_at) - Date.parse(upstream.created_at)).toBe(seconds * 1000);
      expect(Date.parse(res.body.expires_at as string)).toBe(Date.parse(upstream.expires_at));
    },
  );
});
