import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import type { WebhookVerifier } from '../../src/options/verification.options.js';
import { createTestApp, PLATFORMS, type TestApp } from '../support/verification-app.js';
import {
  CapturingLogger,
  drive,
  eventsOf,
  moduleOptions,
  payloadFor,
  postWebhook,
  reconcilerOf,
  settle,
  signed,
  startHost,
  startSandbox,
  startSession,
} from './harness.js';

describe.each(PLATFORMS)('webhook route options (%s)', (platform) => {
  let sb: VerificationSandbox;
  let host: TestApp | undefined;

  beforeAll(async () => {
    sb = await startSandbox();
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });
  afterAll(async () => {
    await sb?.close();
  });

  const ts = (): number => Math.floor(sb.now() / 1000);

  it('accepts several secrets at once (rotation): the sandbox signs with the older one', async () => {
    const newer = `whsec_${randomBytes(32).toString('base64')}`;
    host = await startHost(platform, sb, {
      module: { webhooks: { secret: [newer, sb.demoAccount.webhookSecret] } },
    });
    const s = await startSession(host, sb, 'sms');
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    const byNewer = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(newer, payloadFor('verification.verified', s.requestId), { timestampSeconds: ts() }),
    );
    expect(byNewer.status).toBe(200);
  });

  it("plugs a host's own verifier over the raw bytes (and a throwing verifier refuses)", async () => {
    const key = randomBytes(32);
    const seen: Buffer[] = [];
    const verifier: WebhookVerifier = {
      async verify(rawBody, headers) {
        seen.push(rawBody);
        if (headers['x-boom'] === '1') throw new Error(`verifier exploded with ${key.toString('hex')}`);
        const expected = createHmac('sha256', key).update(rawBody).digest('hex');
        return headers['x-test-signature'] === expected;
      },
    };
    const logger = new CapturingLogger();
    host = await startHost(platform, sb, {
      module: { webhooks: { verifier } },
      logger,
      receiveWebhooks: false,
    });
    const s = await startSession(host, sb, 'reverse_flash_call');
    await drive(sb, s, 'verified');
    const body = JSON.stringify(payloadFor('verification.verified', s.requestId));
    const url = `${host.url}/verification/webhooks`;
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
    expect(eventsOf(host, s.requestId)).toEqual([]);
    const accepted = await postWebhook(url, {
      headers: { 'content-type': 'application/json', 'x-test-signature': good },
      body,
    });
    expect(accepted.body).toEqual({ received: true, result: 'processed' });
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
    expect(seen.every((b) => Buffer.isBuffer(b) && b.toString('utf8') === body)).toBe(true);
    expect(logger.lines.map((l) => l.message).join('\n')).not.toContain(key.toString('hex'));
  });

  it("signature: 'none' needs saying so, logs a warning at boot, and still trusts only the API", async () => {
    const logger = new CapturingLogger();
    host = await startHost(platform, sb, { module: { webhooks: { signature: 'none' } }, logger });
    expect(logger.at('warn').some((m) => m.includes('signatures are NOT checked'))).toBe(true);
    const s = await startSession(host, sb, 'sms');
    const url = `${host.url}/verification/webhooks`;
    const unsigned = { headers: { 'content-type': 'application/json' }, body: '' };
    // An unsigned claim of an outcome the API does not show emits nothing.
    const claim = await postWebhook(url, {
      ...unsigned,
      body: JSON.stringify(payloadFor('verification.verified', s.requestId)),
    });
    expect(claim.body).toEqual({ received: true, result: 'deferred' });
    expect(eventsOf(host, s.requestId)).toEqual([]);
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('without the raw body it fails loudly: 503 service_unavailable and an error naming the fix, never a silent 401', async () => {
    const logger = new CapturingLogger();
    host = await startHost(platform, sb, { rawBody: false, logger });
    const s = await startSession(host, sb, 'sms');
    await drive(sb, s, 'verified');
    await settle(sb);
    const attempts = sb.webhookLog().filter((d) => d.request_id === s.requestId);
    expect(attempts.map((d) => d.status)).toEqual([503]);
    expect(eventsOf(host, s.requestId)).toEqual([]);
    const errors = logger.at('error');
    expect(errors).toHaveLength(1);
    expect(errors[0]).toContain('NestFactory.create(AppModule, { rawBody: true })');
    // A hand-made delivery gets the same answer, whatever its signature.
    const again = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: ts(),
      }),
    );
    expect(again.status).toBe(503);
    expect(again.contentType).toMatch(/^application\/problem\+json/);
    expect(again.body.error_code).toBe('service_unavailable');
    expect(logger.at('error')).toHaveLength(1); // loud once, then reminders
    expect(logger.at('warn').some((m) => m.includes('rawBody: true'))).toBe(true);
  });

  it('serves the route at a relative path under the prefix, or at an absolute one', async () => {
    host = await startHost(platform, sb, {
      module: { webhooks: { secret: sb.demoAccount.webhookSecret, path: 'events' } },
      receiveWebhooks: false,
    });
    const unknown = () =>
      signed(
        sb.demoAccount.webhookSecret,
        payloadFor('verification.verified', '5e3f0000-0000-4000-8000-00000000000a'),
        {
          timestampSeconds: ts(),
        },
      );
    expect((await postWebhook(`${host.url}/verification/events`, unknown())).status).toBe(200);
    expect((await postWebhook(`${host.url}/verification/webhooks`, unknown())).status).toBe(404);
    await host.close();
    host = await startHost(platform, sb, {
      module: {
        routes: { prefix: 'api/phone' },
        webhooks: { secret: sb.demoAccount.webhookSecret, path: '/hooks/phone' },
      },
      receiveWebhooks: false,
    });
    expect((await postWebhook(`${host.url}/hooks/phone`, unknown())).status).toBe(200);
    expect((await postWebhook(`${host.url}/api/phone/webhooks`, unknown())).status).toBe(404);
  });

  it('has no webhook route without a secret, or when switched off', async () => {
    const { webhooks: _webhooks, ...withoutWebhooks } = moduleOptions(sb);
    void _webhooks;
    host = await createTestApp({ platform, module: withoutWebhooks });
    expect((await postWebhook(`${host.url}/verification/webhooks`, { headers: {}, body: '' })).status).toBe(
      404,
    );
    await host.close();
    host = await createTestApp({
      platform,
      module: moduleOptions(sb, { webhooks: { secret: sb.demoAccount.webhookSecret, enabled: false } }),
    });
    expect((await postWebhook(`${host.url}/verification/webhooks`, { headers: {}, body: '' })).status).toBe(
      404,
    );
  });

  it('forRootAsync declares the route statically (webhooks: { enabled, path }) and the factory gives the secret', async () => {
    host = await createTestApp({
      platform,
      module: VerificationModule.forRootAsync({
        webhooks: { enabled: true, path: 'incoming' },
        useFactory: async () =>
          moduleOptions(sb, { webhooks: { secret: sb.demoAccount.webhookSecret, path: 'incoming' } }),
      }),
    });
    await sb.updateAccount(sb.demoAccount.apiKey, { webhookUrl: `${host.url}/verification/incoming` });
    const s = await startSession(host, sb, 'msgr2_bot');
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it('forRootAsync refuses to boot when the factory and the static route disagree, naming the field', async () => {
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({ useFactory: () => moduleOptions(sb) }),
      }),
    ).rejects.toThrow(/"webhooks\.enabled" must be given statically/);
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({
          webhooks: { enabled: true },
          useFactory: () => moduleOptions(sb, { webhooks: {} }),
        }),
      }),
    ).rejects.toThrow(/"webhooks\.secret" is required/);
    await expect(
      createTestApp({
        platform,
        module: VerificationModule.forRootAsync({
          webhooks: { enabled: true },
          useFactory: () =>
            moduleOptions(sb, { webhooks: { secret: sb.demoAccount.webhookSecret, path: 'elsewhere' } }),
        }),
      }),
    ).rejects.toThrow(/"webhooks\.path" must be given statically/);
  });

  it('with the reconciler off, an outcome the API does not show yet is answered 503 so that the sender retries', async () => {
    host = await startHost(platform, sb, { module: { reconcile: { enabled: false } } });
    const s = await startSession(host, sb, 'sms');
    expect(await reconcilerOf(host).pending()).toBe(0);
    const early = await postWebhook(
      `${host.url}/verification/webhooks`,
      signed(sb.demoAccount.webhookSecret, payloadFor('verification.verified', s.requestId), {
        timestampSeconds: ts(),
      }),
    );
    expect(early.status).toBe(503);
    expect(early.body.error_code).toBe('service_unavailable');
    expect(eventsOf(host, s.requestId)).toEqual([]);
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(eventsOf(host, s.requestId)).toEqual(['verification.verified']);
  });

  it("refuses signature: 'none' together with confirmWithApi: false (unsigned claims would be believed)", async () => {
    await expect(
      createTestApp({
        platform,
        module: moduleOptions(sb, { webhooks: { signature: 'none', confirmWithApi: false } }),
      }),
    ).rejects.toThrow(/"webhooks\.confirmWithApi"/);
  });

  it("confirmWithApi: false builds the observation from the signed event, identity from the module's record", async () => {
    host = await startHost(platform, sb, {
      module: { webhooks: { secret: sb.demoAccount.webhookSecret, confirmWithApi: false } },
    });
    const s = await startSession(host, sb, 'sms', 'bob');
    sb.resetRequestCounts();
    await drive(sb, s, 'verified');
    await settle(sb);
    expect(sb.requestCount('GET /v1/verify/:id')).toBe(0);
    expect(host.events.filter((e) => e.requestId === s.requestId)).toEqual([
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
  });
});
