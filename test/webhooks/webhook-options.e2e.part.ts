import { createHmac, randomBytes } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { WebhookVerifier } from '../../src/options/verification.options.js';
import { call, createTestApp, PLATFORMS } from '../support/verification-app.js';
import {
  CapturingLogger,
  drive,
  eventsOf,
  lastEventOf,
  moduleOptions,
  payloadFor,
  postWebhook,
  reconcilerOf,
  settle,
  signed,
  startHost,
  startSession,
} from './harness.js';

describe.each(PLATFORMS)('webhook route options (%s)', (platform) => {
  const suite = sandboxSuite();

  const ts = (): number => Math.floor(suite.sb.now() / 1000);

  it('accepts several secrets at once (rotation): the sandbox signs with the older one', async () => {
    const newer = `whsec_${randomBytes(32).toString('base64')}`;
    suite.host = await startHost(platform, suite.sb, {
      module: { webhooks: { secret: [newer, suite.sb.demoAccount.webhookSecret] } },
    });
    const s = await startSession(suite.host, suite.sb, 'sms');
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.verified']);
    const byNewer = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(newer, payloadFor('verification.verified', s.requestId), { timestampSeconds: ts() }),
    );
    expect(byNewer.status).toBe(200);
    // Any other secret is refused; the timestamp is read on the module's clock, not the machine's.
    const byOther = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(
        `whsec_${randomBytes(32).toString('base64')}`,
        payloadFor('verification.verified', s.requestId),
        {
          timestampSeconds: ts(),
        },
      ),
    );
    expect([byOther.status, byOther.body.error_code]).toEqual([401, 'invalid_signature']);
    await suite.sb.advance(3_600_000);
    const anHourOn = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(newer, payloadFor('verification.verified', s.requestId), { timestampSeconds: ts() }),
    );
    expect(anHourOn.status).toBe(200);
  });

  it("plugs a host's own verifier over the raw bytes (and a throwing verifier refuses)", async () => {
    const key = randomBytes(32);
    const seen: Buffer[] = [];
    const verifier: WebhookVerifier = {
      async verify(rawBody, headers) {
        seen.push(rawBody);
        if (headers['x-boom'] === '1') throw new Error(`verifier exploded with ${key.toString('hex')}`);
        // A verifier written in plain JavaScript may answer something else than a boolean.
        if (headers['x-truthy'] === '1') return 'yes' as unknown as boolean;
        const expected = createHmac('sha256', key).update(rawBody).digest('hex');
        return headers['x-test-signature'] === expected;
      },
    };
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, {
      module: { webhooks: { verifier } },
      logger,
      receiveWebhooks: false,
    });
    const s = await startSession(suite.host, suite.sb, 'reverse_flash_call');
    await drive(suite.sb, s, 'verified');
    const body = JSON.stringify(payloadFor('verification.verified', s.requestId));
    const url = `${suite.host.url}/verification/webhooks`;
    const good = createHmac('sha256', key).update(body).digest('hex');
    const refused = await postWebhook(url, {
      headers: { 'content-type': 'application/json', 'x-test-signature': 'nope' },
      body,
    });
    expect(refused.status).toBe(401);
    const thrown = await postWebhook(url, {
      headers: { 'content-type': 'application/json', 'x-test-signature': good, 'x-boom': '1' },
      body,
    });
    expect(thrown.status).toBe(401);
    // Only `true` lets a delivery in.
    const truthy = await postWebhook(url, {
      headers: { 'content-type': 'application/json', 'x-test-signature': good, 'x-truthy': '1' },
      body,
    });
    expect(truthy.status).toBe(401);
    expect(eventsOf(suite.host, s.requestId)).toEqual([]);
    // The operator reads why each was refused (never the verifier's own error: it may quote a secret).
    expect(logger.at('warn').filter((m) => m.startsWith('webhook refused'))).toEqual([
      'webhook refused: invalid signature (refused by the verifier)',
      'webhook refused: invalid signature (the verifier threw)',
      'webhook refused: invalid signature (refused by the verifier)',
    ]);
    const accepted = await postWebhook(url, {
      headers: { 'content-type': 'application/json', 'x-test-signature': good },
      body,
    });
    expect(accepted.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.verified']);
    expect(seen.every((b) => Buffer.isBuffer(b) && b.toString('utf8') === body)).toBe(true);
    expect(logger.lines.map((l) => l.message).join('\n')).not.toContain(key.toString('hex'));
  });

  it("signature: 'none' needs saying so, logs a warning at boot, and still trusts only the API", async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { module: { webhooks: { signature: 'none' } }, logger });
    expect(logger.at('warn').some((m) => m.includes('signatures are NOT checked'))).toBe(true);
    const s = await startSession(suite.host, suite.sb, 'sms');
    const url = `${suite.host.url}/verification/webhooks`;
    const unsigned = { headers: { 'content-type': 'application/json' }, body: '' };
    // An unsigned claim of an outcome the API does not show emits nothing.
    const claim = await postWebhook(url, {
      ...unsigned,
      body: JSON.stringify(payloadFor('verification.verified', s.requestId)),
    });
    expect(claim.body).toEqual({ received: true, result: 'deferred' });
    expect(eventsOf(suite.host, s.requestId)).toEqual([]);
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.verified']);
  });

  it('without the raw body it fails loudly: 503 service_unavailable and an error naming the fix, never a silent 401', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger });
    const s = await startSession(suite.host, suite.sb, 'sms');
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    const attempts = suite.sb.webhookLog().filter((d) => d.request_id === s.requestId);
    expect(attempts.map((d) => d.status)).toEqual([503]);
    expect(eventsOf(suite.host, s.requestId)).toEqual([]);
    const errors = logger.at('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('NestFactory.create(AppModule, { rawBody: true })');
    // A hand-made delivery gets the same answer, whatever its signature.
    const again = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: ts(),
      }),
    );
    expect(again.status).toBe(503);
    expect(again.retryAfter).toBe('60');
    expect(again.contentType).toMatch(/^application\/problem\+json/);
    expect(again.body.error_code).toBe('service_unavailable');
    expect(logger.at('error')).toHaveLength(1); // loud once, then reminders
    expect(logger.at('warn').some((m) => m.includes('rawBody: true'))).toBe(true);
  });

  it('serves the route at a relative path under the prefix, or at an absolute one', async () => {
    suite.host = await startHost(platform, suite.sb, {
      module: { webhooks: { secret: suite.sb.demoAccount.webhookSecret, path: 'events' } },
      receiveWebhooks: false,
    });
    const unknown = () =>
      signed(
        suite.sb.demoAccount.webhookSecret,
        payloadFor('verification.verified', '5e3f0000-0000-4000-8000-00000000000a'),
        {
          timestampSeconds: ts(),
        },
      );
    expect((await postWebhook(`${suite.host.url}/verification/events`, unknown())).status).toBe(200);
    expect((await postWebhook(`${suite.host.url}/verification/webhooks`, unknown())).status).toBe(404);
    await suite.host.close();
    suite.host = await startHost(platform, suite.sb, {
      module: {
        routes: { prefix: 'api/phone' },
        webhooks: { secret: suite.sb.demoAccount.webhookSecret, path: '/hooks/phone' },
      },
      receiveWebhooks: false,
    });
    expect((await postWebhook(`${suite.host.url}/hooks/phone`, unknown())).status).toBe(200);
    expect((await postWebhook(`${suite.host.url}/api/phone/webhooks`, unknown())).status).toBe(404);
  });

  it('has no webhook route without a secret, or when switched off', async () => {
    const { webhooks: _webhooks, ...withoutWebhooks } = moduleOptions(suite.sb);
    void _webhooks;
    suite.host = await createTestApp({ platform, module: withoutWebhooks });
    expect(
      (await postWebhook(`${suite.host.url}/verification/webhooks`, { headers: {}, body: '' })).status,
    ).toBe(404);
    await suite.host.close();
    suite.host = await createTestApp({
      platform,
      module: moduleOptions(suite.sb, {
        webhooks: { secret: suite.sb.demoAccount.webhookSecret, enabled: false },
      }),
    });
    expect(
      (await postWebhook(`${suite.host.url}/verification/webhooks`, { headers: {}, body: '' })).status,
    ).toBe(404);
  });

  it('forRootAsync declares the route statically (webhooks: { enabled, path }) and the factory gives the secret', async () => {
    suite.host = await createTestApp({
      platform,
      module: VerificationModule.forRootAsync({
        webhooks: { enabled: true, path: 'incoming' },
        useFactory: async () =>
          moduleOptions(suite.sb, {
            webhooks: { secret: suite.sb.demoAccount.webhookSecret, path: 'incoming' },
          }),
      }),
    });
    await suite.sb.updateAccount(suite.sb.demoAccount.apiKey, {
      webhookUrl: `${suite.host.url}/verification/incoming`,
    });
    const s = await startSession(suite.host, suite.sb, 'msgr2_bot');
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.verified']);
  });

  it('forRootAsync refuses to boot when the factory and the static route disagree, naming the field', async () => {
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({ useFactory: () => moduleOptions(suite.sb) }),
      }),
    ).rejects.toThrow(/"webhooks\.enabled" must be given statically/);
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({
          webhooks: { enabled: true },
          useFactory: () => moduleOptions(suite.sb, { webhooks: {} }),
        }),
      }),
    ).rejects.toThrow(/"webhooks\.secret" is required/);
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({
          webhooks: { enabled: true },
          useFactory: () =>
            moduleOptions(suite.sb, {
              webhooks: { secret: suite.sb.demoAccount.webhookSecret, path: 'elsewhere' },
            }),
        }),
      }),
    ).rejects.toThrow(/"webhooks\.path" must be given statically/);
  });

  it("the README's webhooks line with its variable unset stops the boot naming webhooks.secret; enabled: false boots without the route", async () => {
    const unset = process.env.VERIFICATION_WEBHOOK_SECRET_NEVER_SET;
    await expect(
      createTestApp({ platform, module: moduleOptions(suite.sb, { webhooks: { secret: unset! } }) }),
    ).rejects.toThrow(/option "webhooks\.secret" is required when webhooks are enabled or configured/);
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({
          useFactory: () => moduleOptions(suite.sb, { webhooks: { secret: unset! } }),
        }),
      }),
    ).rejects.toThrow(/option "webhooks\.secret" is required/);
    const off = await suite.boot({
      platform,
      module: moduleOptions(suite.sb, { webhooks: { enabled: false, secret: unset! } }),
    });
    expect((await call(off.url, 'POST', '/verification/webhooks', {})).status).toBe(404);
  });

  it('with the reconciler off, an outcome the API does not show yet is answered 503 so that the sender retries', async () => {
    suite.host = await startHost(platform, suite.sb, { module: { reconcile: { enabled: false } } });
    const s = await startSession(suite.host, suite.sb, 'sms');
    expect(await reconcilerOf(suite.host).pending()).toBe(0);
    const early = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: ts(),
      }),
    );
    expect(early.status).toBe(503);
    expect(early.retryAfter).toBe('5');
    expect(early.body).toMatchObject({
      error_code: 'service_unavailable',
      detail: 'The API does not show this outcome yet; retry later',
    });
    expect(eventsOf(suite.host, s.requestId)).toEqual([]);
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    expect(eventsOf(suite.host, s.requestId)).toEqual(['verification.verified']);
  });

  it("refuses signature: 'none' together with confirmWithApi: false (unsigned claims would be believed)", async () => {
    await expect(
      createTestApp({
        platform,
        module: moduleOptions(suite.sb, { webhooks: { signature: 'none', confirmWithApi: false } }),
      }),
    ).rejects.toThrow(/"webhooks\.confirmWithApi"/);
  });

  it("confirmWithApi: false builds the observation from the signed event, identity from the module's record", async () => {
    suite.host = await startHost(platform, suite.sb, {
      module: { webhooks: { secret: suite.sb.demoAccount.webhookSecret, confirmWithApi: false } },
    });
    const s = await startSession(suite.host, suite.sb, 'sms', 'bob');
    suite.sb.resetRequestCounts();
    await drive(suite.sb, s, 'verified');
    await settle(suite.sb);
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(0);
    expect(suite.host.events.filter((e) => e.requestId === s.requestId)).toEqual([
      expect.objectContaining({
        event: 'verification.verified',
        status: 'verified',
        owner: 'bob',
        phoneNumber: s.phone,
        method: 'sms',
        source: 'webhook',
        verifiedAt: expect.any(Date),
      }),
    ]);
    // The signed event's own verified_at is the event's time (the clock is not read for it).
    const other = await startSession(suite.host, suite.sb, 'sms');
    const verifiedAt = '2026-01-02T03:04:05.000Z';
    const res = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(
        suite.sb.demoAccount.webhookSecret,
        payloadFor('verification.verified', other.requestId, { verified_at: verifiedAt }),
        { timestampSeconds: ts() },
      ),
    );
    expect(res.body).toEqual({ received: true, result: 'processed' });
    expect(suite.host.events.filter((e) => e.requestId === other.requestId)).toEqual([
      expect.objectContaining({ event: 'verification.verified', verifiedAt: new Date(verifiedAt) }),
    ]);
    // The flat variant (no `data` envelope) is read alike: its own verified_at dates the event.
    const flat = await startSession(suite.host, suite.sb, 'sms');
    const flatRes = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(
        suite.sb.demoAccount.webhookSecret,
        { event: 'verification.verified', request_id: flat.requestId, verified_at: verifiedAt },
        { timestampSeconds: ts() },
      ),
    );
    expect(flatRes.body).toEqual({ received: true, result: 'processed' });
    expect(suite.host.events.filter((e) => e.requestId === flat.requestId)).toEqual([
      expect.objectContaining({ event: 'verification.verified', verifiedAt: new Date(verifiedAt) }),
    ]);
    // A verified_at that is not a date's text is not read: the module's clock dates the event.
    const third = await startSession(suite.host, suite.sb, 'sms');
    const numeric = await postWebhook(
      `${suite.host.url}/verification/webhooks`,
      signed(
        suite.sb.demoAccount.webhookSecret,
        payloadFor('verification.verified', third.requestId, { verified_at: Date.parse(verifiedAt) }),
        { timestampSeconds: ts() },
      ),
    );
    expect(numeric.body).toEqual({ received: true, result: 'processed' });
    expect(lastEventOf(suite.host, third.requestId)?.verifiedAt).toEqual(new Date(suite.sb.now()));
  });
});
