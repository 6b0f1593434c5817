/**
 * A switch starts a session the account pays for, as a start does: the ledger counts it started when
 * the switch answers (not only once the tracker first observes it), in its method's row, on Express and
 * Fastify.
 */
import { beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { nextPhone, startHost } from '../webhooks/harness.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe.each(PLATFORMS)('the ledger counts a switch’s session (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  beforeAll(async () => {
    sb = suite.sb;
  });

  it('a switch’s session is in its method’s row as started once the switch has answered', async () => {
    const host = await suite.boot(() =>
      startHost(platform, sb, { receiveWebhooks: false, module: { ledger: {} } }),
    );
    const owner = { 'x-user': 'user-ledger-switch' };
    const started = await call(
      host.url,
      'POST',
      '/verification/start',
      { phone_number: nextPhone(), method: 'sms' },
      owner,
    );
    expect(started.status).toBe(201);
    await sb.advance(61_000);
    const moved = await call(
      host.url,
      'POST',
      '/verification/switch',
      { verification_id: started.body.verification_id, method: 'flash_call' },
      owner,
    );
    expect(moved.status).toBe(201);
    const report = await host.app.get(VerificationLedger).report(new Date(sb.now()));
    const startedByMethod = Object.fromEntries(report.rows.map((r) => [r.method, r.started]));
    expect(startedByMethod).toEqual({ sms: 1, flash_call: 1 });
  });
});
