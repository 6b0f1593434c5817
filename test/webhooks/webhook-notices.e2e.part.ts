import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  apiCheck,
  eventsOf,
  lastEventOf,
  postWebhook,
  payloadFor,
  signed,
  startHost,
  startSession,
} from './harness.js';

/**
 * What a signed code_required notice means for its session (WebhookNotices, webhook-notice.ts): operator_id's SMS
 * fallback announced after the code was already accepted, and, with `confirmWithApi: false`, the code field the
 * status route shows and the time an outcome carries. Each test boots its own host; the sandbox sends it no
 * webhooks, so only the deliveries a test makes reach it.
 */
describe.each(PLATFORMS)('webhook notices (%s)', (platform) => {
  const suite = sandboxSuite();

  const ts = (): number => Math.floor(suite.sb.now() / 1000);

  it('operator_id: a code_required webhook that lands after the code was accepted is still emitted, once, before the outcome', async () => {
    suite.host = await startHost(platform, suite.sb, { receiveWebhooks: false });
    const url = `${suite.host.url}/verification/webhooks`;
    const secret = suite.sb.demoAccount.webhookSecret;
    const deliver = async (event: string, requestId: string) =>
      (await postWebhook(url, signed(secret, payloadFor(event, requestId), { timestampSeconds: ts() }))).body;
    // The SMS fallback happened and the user typed the code before its webhook arrived: the API no longer
    // shows a code awaited, yet the signed event name says the code was asked for.
    const s = await startSession(suite.host, suite.sb, 'operator_id');
    await suite.sb.operator(s.requestId, 'fallback');
    await apiCheck(suite.sb, s.requestId, suite.sb.getSession(s.requestId)!.code as string);
    expect(await deliver('verification.code_required', s.requestId)).toEqual({
      received: true,
      result: 'processed',
    });
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.code_required']);
    expect(await deliver('verification.code_required', s.requestId)).toEqual({
      received: true,
      result: 'processed',
    });
    await suite.sb.advance(1000);
    expect(await deliver('verification.verified', s.requestId)).toEqual({
      received: true,
      result: 'processed',
    });
    expect(eventsOf(suite.host, s.requestId)).toEqual([
      'verification.code_required',
      'verification.verified',
    ]);
    // Approved by the operator without the fallback: no code was ever asked for, so none is announced.
    const direct = await startSession(suite.host, suite.sb, 'operator_id');
    await suite.sb.operator(direct.requestId, 'approve');
    expect(await deliver('verification.verified', direct.requestId)).toEqual({
      received: true,
      result: 'processed',
    });
    expect(eventsOf(suite.host, direct.requestId)).toEqual(['verification.verified']);
  });

  it('confirmWithApi: false: the code field opens only on code_required, and an outcome other than verified has no time', async () => {
    suite.host = await startHost(platform, suite.sb, {
      module: { webhooks: { secret: suite.sb.demoAccount.webhookSecret, confirmWithApi: false } },
      receiveWebhooks: false,
    });
    const s = await startSession(suite.host, suite.sb, 'operator_id', 'bob');
    const deliver = async (event: string) =>
      (
        await postWebhook(
          `${suite.host!.url}/verification/webhooks`,
          signed(suite.sb.demoAccount.webhookSecret, payloadFor(event, s.requestId), {
            timestampSeconds: ts(),
          }),
        )
      ).body;
    const awaitingCode = async () =>
      (
        await call(suite.host!.url, 'GET', `/verification/status/${s.verificationId}`, undefined, {
          'x-user': 'bob',
        })
      ).body.awaiting_code;
    expect(await awaitingCode()).toBe(false);
    // An event that announces neither a code nor an outcome changes nothing the user sees.
    expect(await deliver('verification.sent')).toEqual({ received: true, result: 'processed' });
    expect(await awaitingCode()).toBe(false);
    expect(await deliver('verification.code_required')).toEqual({ received: true, result: 'processed' });
    expect(await awaitingCode()).toBe(true);
    expect(await deliver('verification.failed')).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.code_required', 'verification.failed']);
    expect(lastEventOf(suite.host, s.requestId)).toMatchObject({ status: 'failed', verifiedAt: null });
  });
});
