import { beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { OnVerificationEvent } from '../../src/module/on-verification-event.decorator.js';
import type { VerificationEvent } from '../../src/core/verification-events.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  drive,
  eventsOf,
  lastEventOf,
  payloadFor,
  postWebhook,
  reconcilerOf,
  settle,
  signed,
  startHost,
  startSession,
} from './harness.js';
import { WebhookRecorder } from './webhook-recorder.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const GET_SESSION = 'GET /v1/verify/:id';

/**
 * A host listener that, as the README's hosts do, asks the module about the session while handling its
 * outcome: its status and its verified number (for the sessions a test names in `watched`).
 */
@Injectable()
class ReadingListener {
  readonly watched = new Set<string>();
  readonly seen: { event: string; status: string; phone: string | null }[] = [];
  constructor(private readonly verification: VerificationService) {}

  @OnVerificationEvent('verified')
  async onVerified(event: VerificationEvent): Promise<void> {
    if (!this.watched.has(event.requestId)) return;
    const status = await this.verification.status(event.verificationId, event.owner);
    const phone = await this.verification.getVerifiedPhone(event.verificationId, event.owner);
    this.seen.push({ event: event.event, status: status.status, phone });
  }
}

describe.each(PLATFORMS)('webhook route: signatures, dedupe and confirmation (%s)', (platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp;
  let route: string;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot(() => startHost(platform, sb, { providers: [ReadingListener] }));
    route = `${host.url}/verification/webhooks`;
  });

  /** A session whose outcome the host has not heard of: its webhook is dropped by the sandbox. */
  async function silentlyVerified(method: 'sms' | 'reverse_flash_call' = 'reverse_flash_call') {
    const s = await startSession(host, sb, method);
    sb.addFault({ webhooks: { drop_next: 1 } });
    await drive(sb, s, 'verified');
    await settle(sb);
    return s;
  }

  it('answers a delivery the sandbox signed with 200 and emits what the API says (source webhook, owner)', async () => {
    const s = await startSession(host, sb, 'sms', 'alice');
    await drive(sb, s, 'verified');
    await settle(sb);
    const delivery = sb.webhookLog().filter((d) => d.request_id === s.requestId);
    expect(delivery.map((d) => [d.event, d.status])).toEqual([['verification.verified', 200]]);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    expect(lastEventOf(host, s.requestId)).toMatchObject({
      source: 'webhook',
      owner: 'alice',
      status: 'verified',
      phoneNumber: s.phone,
      method: 'sms',
    });
  });

  it('refuses a forged signature with 401 invalid_signature: nothing emitted, no upstream call', async () => {
    const s = await silentlyVerified();
    const before = sb.requestCount(GET_SESSION);
    const forged = signed(
      `whsec_${Buffer.from('not the secret at all').toString('base64')}`,
      payloadFor('verification.verified', s.requestId),
    );
    const res = await postWebhook(route, forged);
    expect(res.status).toBe(401);
    expect(res.contentType).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ status: 401, error_code: 'invalid_signature' });
    // The right signature over another body is forged too.
    const real = signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId));
    const swapped = await postWebhook(route, {
      headers: real.headers,
      body: real.body.replace('verified', 'expired'),
    });
    expect(swapped.status).toBe(401);
    const unsigned = await postWebhook(route, {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(payloadFor('verification.verified', s.requestId)),
    });
    expect(unsigned.status).toBe(401);
    expect(unsigned.body.error_code).toBe('invalid_signature');
    expect(sb.requestCount(GET_SESSION)).toBe(before);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    expect(JSON.stringify(res.body)).not.toContain(sb.demoAccount.webhookSecret);
  });

  it('refuses a stale or far-future timestamp with 401, even when correctly signed', async () => {
    const s = await silentlyVerified();
    const before = sb.requestCount(GET_SESSION);
    const nowSeconds = Math.floor(sb.now() / 1000);
    for (const timestampSeconds of [nowSeconds - 301, nowSeconds + 301]) {
      const res = await postWebhook(
        route,
        signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
          timestampSeconds,
        }),
      );
      expect(res.status).toBe(401);
      expect(res.body.error_code).toBe('invalid_signature');
    }
    expect(sb.requestCount(GET_SESSION)).toBe(before);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    // Within the tolerance the same session is accepted and confirmed.
    const fresh = await postWebhook(
      route,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: nowSeconds - 299,
      }),
    );
    expect(fresh.status).toBe(200);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('replays: a captured delivery sent again is a 200 duplicate with no upstream call; after the tolerance, 401', async () => {
    const recorder = await WebhookRecorder.start(host.url);
    try {
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${recorder.url}/verification/webhooks` });
      const s = await startSession(host, sb, 'msgr1_otp');
      await drive(sb, s, 'verified');
      await settle(sb);
      expect(recorder.recorded).toHaveLength(1);
      expect(recorder.recorded[0]!.status).toBe(200);
      const before = sb.requestCount(GET_SESSION);
      const replay = await recorder.replay(route, recorder.recorded[0]!);
      expect(replay).toEqual({ status: 200, body: { received: true, result: 'duplicate' } });
      expect(sb.requestCount(GET_SESSION)).toBe(before);
      await sb.advance(301_000);
      await settle(sb);
      const late = await recorder.replay(route, recorder.recorded[0]!);
      expect(late.status).toBe(401);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    } finally {
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: route });
      await recorder.close();
    }
  });

  it('replays late in the tolerance: one second inside it, still a 200 duplicate with no upstream call', async () => {
    // The memory of a handled delivery must outlast the time its signature stays fresh: the replay an
    // attacker sends just before the tolerance ends is refused as surely as one sent at once.
    const recorder = await WebhookRecorder.start(host.url);
    try {
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${recorder.url}/verification/webhooks` });
      // A session still pending: a replay that were handled again would ask the API about it again.
      const s = await startSession(host, sb, 'operator_id');
      await sb.operator(s.requestId, 'fallback');
      await settle(sb);
      expect(recorder.recorded).toHaveLength(1);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.code_required']);
      const before = sb.requestCount(GET_SESSION);
      const sentAt = Number(recorder.recorded[0]!.headers['webhook-timestamp']) * 1000;
      for (const at of [5_000, 60_000, 299_000]) {
        await sb.advance(sentAt + at - sb.now());
        const replay = await recorder.replay(route, recorder.recorded[0]!);
        expect({ at, ...replay }).toEqual({
          at,
          status: 200,
          body: { received: true, result: 'duplicate' },
        });
      }
      expect(sb.requestCount(GET_SESSION)).toBe(before);
      expect(eventsOf(host, s.requestId)).toEqual(['verification.code_required']);
    } finally {
      await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: route });
      await recorder.close();
    }
  });

  it('checks the timestamp on the store clock: a sandbox an hour ahead of real time is still accepted', async () => {
    await sb.advance(3_600_000);
    await settle(sb);
    const s = await startSession(host, sb, 'reverse_flash_call');
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(
      sb
        .webhookLog()
        .filter((d) => d.request_id === s.requestId)
        .map((d) => d.status),
    ).toEqual([200]);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    // Real time is an hour behind the store's clock: a delivery stamped with it is stale.
    const realTime = await postWebhook(
      route,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: Math.floor(Date.now() / 1000),
      }),
    );
    expect(realTime.status).toBe(401);
  });

  it('acknowledges a session this deployment did not start (200 ignored) without asking the API', async () => {
    const before = sb.requestCount(GET_SESSION);
    const res = await postWebhook(
      route,
      signed(
        sb.demoAccount.webhookSecret,
        payloadFor('verification.verified', '4d7c2a1e-0000-4000-8000-000000000001'),
        {
          timestampSeconds: Math.floor(sb.now() / 1000),
        },
      ),
    );
    expect(res).toMatchObject({ status: 200, body: { received: true, result: 'ignored' } });
    expect(sb.requestCount(GET_SESSION)).toBe(before);
  });

  it('answers a signed body that names no request_id with 400, one that is not JSON with 415, and nothing else', async () => {
    const ts = Math.floor(sb.now() / 1000);
    const before = sb.requestCount(GET_SESSION);
    const noId = await postWebhook(
      route,
      signed(
        sb.demoAccount.webhookSecret,
        { type: 'verification.verified', data: {} },
        { timestampSeconds: ts },
      ),
    );
    expect(noId.status).toBe(400);
    expect(noId.contentType).toMatch(/^application\/problem\+json/);
    expect(noId.body.error_code).toBe('validation_error');
    const textBody = signed(sb.demoAccount.webhookSecret, 'verified!', { timestampSeconds: ts });
    const text = await postWebhook(route, {
      headers: { ...textBody.headers, 'content-type': 'text/plain' },
      body: textBody.body,
    });
    expect(text.status).toBe(415);
    expect(text.body.error_code).toBe('unsupported_media_type');
    // Malformed JSON is refused by the host's body parser before the route runs (the host's own 400).
    const malformed = await postWebhook(
      route,
      signed(sb.demoAccount.webhookSecret, '{"type":', { timestampSeconds: ts }),
    );
    expect(malformed.status).toBe(400);
    expect(sb.requestCount(GET_SESSION)).toBe(before);
  });

  it('accepts the flat payload variant (event and request_id at the top level)', async () => {
    const s = await silentlyVerified('sms');
    const res = await postWebhook(
      route,
      signed(
        sb.demoAccount.webhookSecret,
        { event: 'verification.verified', request_id: s.requestId },
        { timestampSeconds: Math.floor(sb.now() / 1000) },
      ),
    );
    expect(res.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('a webhook saying verified while the API still says sent emits nothing; the reconciler emits once the API agrees', async () => {
    const s = await startSession(host, sb, 'sms');
    const early = await postWebhook(
      route,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: Math.floor(sb.now() / 1000),
      }),
    );
    expect(early.body).toEqual({ received: true, result: 'deferred' });
    expect(eventsOf(host, s.requestId)).toEqual([]);
    // The API agrees later; its own webhook is lost. The deferred session is polled at the spec's pace
    // (2.5 s), not the lazy 15 s.
    sb.addFault({ webhooks: { drop_next: 1 } });
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    await sb.advance(2500);
    await reconcilerOf(host).runOnce();
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    expect(lastEventOf(host, s.requestId)?.source).toBe('poll');
    await sb.advance(15_000);
    await reconcilerOf(host).runOnce();
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('answers 503 while the API is down, so the sender retries; the retry succeeds and emits once', async () => {
    const s = await startSession(host, sb, 'flash_call');
    sb.addFault({ route: GET_SESSION, kind: 'status', status: 503, count: 0 });
    try {
      await drive(sb, s, 'verified');
      await settle(sb);
    } finally {
      sb.clearFaults();
    }
    const attempts = () => sb.webhookLog().filter((d) => d.request_id === s.requestId);
    expect(attempts().map((d) => d.status)).toEqual([503]);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    await sb.advance(1000); // the sandbox's first retry is due 1 s later
    await settle(sb);
    expect(attempts().map((d) => d.status)).toEqual([503, 200]);
    expect(new Set(attempts().map((d) => d.webhook_id)).size).toBe(1);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    expect(lastEventOf(host, s.requestId)?.source).toBe('webhook');
  });

  it("a listener of the webhook's verified event already reads the session as verified, from its record", async () => {
    const listener = host.app.get(ReadingListener);
    const s = await startSession(host, sb, 'sms', 'carol');
    listener.watched.add(s.requestId);
    await drive(sb, s, 'verified');
    sb.resetRequestCounts();
    await settle(sb);
    expect(lastEventOf(host, s.requestId)?.source).toBe('webhook');
    // The record was saved before the event: the listener's reads find it verified, with no GET of their own.
    expect(listener.seen).toEqual([{ event: 'verification.verified', status: 'verified', phone: s.phone }]);
    expect(sb.requestCount(GET_SESSION)).toBe(1);
  });
});
