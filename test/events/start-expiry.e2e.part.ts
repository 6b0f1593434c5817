import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { nextPhone, startHost, startSandbox } from '../webhooks/harness.js';

/**
 * A start the API answers without `expires_at`: the session lasts what the module asked for,
 * `expirySeconds` (in seconds) when the host set it, 300 s when it did not: the start answer says so, on
 * the sandbox's frozen clock.
 */
describe.each(ONE_PLATFORM)('a start answered without expires_at (%s)', (platform) => {
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
    ['expirySeconds: 120', { expirySeconds: 120 }, 120_000],
    ['expirySeconds absent (the default)', {}, 300_000],
  ])('%s: expires_at is the start plus that many seconds', async (_shape, module, ttlMs) => {
    host = await startHost(platform, sb, { module });
    sb.addFault({ route: 'POST /v1/verify', kind: 'field', field: 'expires_at', value: undefined, count: 1 });
    const startedAt = sb.now();
    const res = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: nextPhone(), method: 'sms' },
      { 'x-user': 'user-1' },
    );
    expect(res.status).toBe(201);
    expect(res.body.expires_at).toBe(new Date(startedAt + ttlMs).toISOString());
  });
});
