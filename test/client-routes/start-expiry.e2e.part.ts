/**
 * A start the API answers without `expires_at` (the field left out of an answer): the session lives
 * the host's `expirySeconds` from the start, else the API's default of 5 minutes. The start's answer
 * is built from the record, on the sandbox's frozen clock.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type TestApp } from '../support/verification-app.js';
import { nextPhone, startHost, startSandbox } from '../webhooks/harness.js';

describe.each(PLATFORMS)('client routes: a start answered without expires_at (%s)', (platform) => {
  let sb: VerificationSandbox;
  let host: TestApp | undefined;

  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterEach(async () => {
    sb.clearFaults();
    await host?.close();
    host = undefined;
  });
  afterAll(async () => {
    await sb?.close();
  });

  it.each([
    [undefined, 300],
    [120, 120],
  ])('expirySeconds %j: the session expires %j s after the start', async (expirySeconds, seconds) => {
    host = await startHost(platform, sb, {
      receiveWebhooks: false,
      module: { expirySeconds, reconcile: { enabled: false } },
    });
    sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'expires_at', value: null });
    const at = sb.now();
    const res = await call(host.url, 'POST', '/verification/start', {
      phone_number: nextPhone(),
      method: 'sms',
    });
    expect(res.status).toBe(201);
    expect(Date.parse(res.body.expires_at as string)).toBe(at + seconds * 1000);
  });
});
