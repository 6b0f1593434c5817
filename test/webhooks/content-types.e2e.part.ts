import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { PLATFORMS } from '../support/verification-app.js';
import { CapturingLogger, payloadFor, postWebhook, signed, startHost, startSession } from './harness.js';

/**
 * A webhook whose content type the host does not parse is a 415 (the sender stops retrying), not a
 * 503 "the app has no rawBody" (which the sender would retry forever and which sends the operator
 * after a fix that is already in place). The 503 stays for an app that really lacks `rawBody: true`.
 */
describe.each(PLATFORMS)('webhook content types (%s)', (platform) => {
  const suite = sandboxSuite();

  const route = (): string => `${suite.host!.url}/verification/webhooks`;
  const ts = (): number => Math.floor(suite.sb.now() / 1000);

  it('unsigned, with a +json type the host does not parse: 415, no error logged, nothing asked upstream', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { module: { webhooks: { signature: 'none' } }, logger });
    const s = await startSession(suite.host, suite.sb, 'sms');
    const gets = suite.sb.requestCount('GET /v1/verify/:id');
    const res = await postWebhook(route(), {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify(payloadFor('verification.verified', s.requestId)),
    });
    expect(res.status).toBe(415);
    // Fastify refuses a content type it has no parser for itself, before the route (its own 415).
    if (platform === 'express') {
      expect(res.contentType).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ status: 415, error_code: 'unsupported_media_type' });
    }
    expect(logger.at('error')).toEqual([]);
    expect(logger.at('warn').some((m) => m.includes('rawBody'))).toBe(false);
    expect(suite.sb.requestCount('GET /v1/verify/:id')).toBe(gets);
  });

  it('signed, with a type that is not JSON: 415 unsupported_media_type from the module on both platforms', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { logger });
    const s = await startSession(suite.host, suite.sb, 'sms');
    const delivery = signed(
      suite.sb.demoAccount.webhookSecret,
      payloadFor('verification.verified', s.requestId),
      {
        timestampSeconds: ts(),
      },
    );
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded']) {
      const res = await postWebhook(route(), {
        headers: { ...delivery.headers, 'content-type': contentType },
        body: delivery.body,
      });
      expect({ contentType, status: res.status, code: res.body.error_code }).toEqual({
        contentType,
        status: 415,
        code: 'unsupported_media_type',
      });
    }
    expect(logger.at('error')).toEqual([]);
    // The same delivery as application/json (with a charset) is processed.
    const ok = await postWebhook(route(), {
      headers: { ...delivery.headers, 'content-type': 'application/json; charset=utf-8' },
      body: delivery.body,
    });
    expect(ok.status).toBe(200);
  });

  it('an app created without rawBody is told at boot, before any webhook, naming rawBody and the route', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger, receiveWebhooks: false });
    const atBoot = logger.at('warn').filter((m) => m.includes('rawBody'));
    expect(atBoot).toHaveLength(1);
    expect(atBoot[0]).toContain('POST /verification/webhooks');
    expect(atBoot[0]).toContain('NestFactory.create(AppModule, { rawBody: true })');
    expect(logger.at('error')).toEqual([]);
    expect(suite.sb.webhookLog()).toEqual([]);
  });

  it('an app created with rawBody, or with webhooks off, boots without that warning', async () => {
    const withRaw = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { logger: withRaw, receiveWebhooks: false });
    expect(withRaw.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
    await suite.host.close();
    const off = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, {
      rawBody: false,
      logger: off,
      receiveWebhooks: false,
      module: { webhooks: { enabled: false } },
    });
    expect(off.at('warn').filter((m) => m.includes('rawBody'))).toEqual([]);
  });

  it('an app really created without rawBody still answers JSON with 503 and the error naming the fix', async () => {
    const logger = new CapturingLogger();
    suite.host = await startHost(platform, suite.sb, { rawBody: false, logger, receiveWebhooks: false });
    const merge = await postWebhook(route(), {
      headers: { 'content-type': 'application/merge-patch+json' },
      body: '{}',
    });
    expect(merge.status).toBe(415);
    expect(logger.at('error')).toEqual([]);
    const json = await postWebhook(
      route(),
      signed(suite.sb.demoAccount.webhookSecret, payloadFor('verification.verified', 'req-x'), {
        timestampSeconds: ts(),
      }),
    );
    expect(json.status).toBe(503);
    expect(json.body.error_code).toBe('service_unavailable');
    expect(logger.at('error')).toHaveLength(1);
    expect(logger.at('error')[0]).toContain('rawBody: true');
  });
});
