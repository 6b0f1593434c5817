/**
 * A host with `app.setGlobalPrefix('api')`: the client routes and the webhook move under it, the
 * browser key cookie follows the real mount path (so a second start of the same browser is resumed,
 * not refused by its own cooldown), and over https it is a `__Host-` cookie that a sibling subdomain
 * cannot plant.
 */
import { describe, expect, it } from '@jest/globals';
import { VersioningType, type INestApplication } from '@nestjs/common';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, createTestApp, PLATFORMS } from '../support/verification-app.js';
import { CapturingLogger, drive, eventsOf, moduleOptions, nextPhone } from '../webhooks/harness.js';

describe.each(PLATFORMS)('a host with a global prefix (%s)', (platform) => {
  const suite = sandboxSuite();

  const boot = async (
    logger?: CapturingLogger,
    globalPrefix = 'api',
    parsers?: (app: INestApplication) => void,
  ) => {
    suite.host = await createTestApp({
      platform,
      globalPrefix,
      trustProxy: true,
      logger,
      ...(parsers && { parsers }),
      // Protection on (coalescing and the resend cooldown); no owner header: the browser key decides.
      module: moduleOptions(suite.sb, { limits: {} }),
    });
    return suite.host;
  };
  const start = (phone: string, headers: Record<string, string>) =>
    call(suite.host!.url, 'POST', '/api/verification/start', { phone_number: phone, method: 'sms' }, headers);
  const cookieOf = (res: Awaited<ReturnType<typeof call>>) =>
    (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  /** With the API's webhook URL at `{base}/webhooks`, a start at `{base}/start` verified by its webhook. */
  const verifiedByWebhookAt = async (base: string, owner: string) => {
    await suite.sb.updateAccount(suite.sb.demoAccount.apiKey, {
      webhookUrl: `${suite.host!.url}${base}/webhooks`,
    });
    const phone = nextPhone();
    const body = { phone_number: phone, method: 'sms' };
    const started = await call(suite.host!.url, 'POST', `${base}/start`, body, { 'x-user': owner });
    expect(started.status).toBe(201);
    const [requestId] = suite.sb.sessionsFor(phone).map((x) => x.request_id);
    await drive(
      suite.sb,
      { requestId: requestId!, verificationId: '', phone, method: 'sms', owner },
      'verified',
    );
    await suite.sb.webhooksIdle();
    expect(eventsOf(suite.host!, requestId!)).toContain('verification.verified');
  };

  it('the browser key cookie is scoped to the prefixed routes, and the same browser is resumed', async () => {
    await boot();
    const ip = { 'x-forwarded-for': '203.0.113.10' };
    const phone = nextPhone();
    const first = await start(phone, ip);
    expect(first.status).toBe(201);
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^pv_browser=[A-Za-z0-9_-]{22}; /);
    expect(setCookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Path=/api/verification',
      'SameSite=Strict',
    ]);
    // The browser sends the cookie back to /api/verification/*: its start again is the same verification.
    const again = await start(phone, { ...ip, cookie: cookieOf(first) });
    expect(again.status).toBe(201);
    expect(again.body).toMatchObject({ resumed: true, verification_id: first.body.verification_id });
    // It already holds its key: nothing is set again (a second Set-Cookie could shadow the first one's Path).
    expect(again.headers.get('set-cookie')).toBeNull();
    // The routes are not served without the prefix.
    expect((await call(suite.host!.url, 'POST', '/verification/start', { phone_number: phone })).status).toBe(
      404,
    );
  });

  it('a start at …/start/ (trailing slash) scopes the cookie to the declared routes, never to one route', async () => {
    await boot();
    const ip = { 'x-forwarded-for': '203.0.113.12' };
    const phone = nextPhone();
    const slashed = await call(
      suite.host!.url,
      'POST',
      '/api/verification/start/',
      { phone_number: phone, method: 'sms' },
      ip,
    );
    // Express routes it (non-strict routing); Fastify does not.
    expect(slashed.status).toBe(platform === 'express' ? 201 : 404);
    if (slashed.status !== 201) return;
    expect((slashed.headers.get('set-cookie') ?? '').split('; ')).toContain('Path=/api/verification');
    const again = await start(phone, { ...ip, cookie: cookieOf(slashed) });
    expect(again.body).toMatchObject({ resumed: true, verification_id: slashed.body.verification_id });
  });

  it('over https the key is a __Host- cookie; a plain pv_browser planted with its value hands nothing over', async () => {
    await boot();
    const https = { 'x-forwarded-proto': 'https', 'x-forwarded-for': '203.0.113.11' };
    const phone = nextPhone();
    const first = await start(phone, https);
    expect(first.status).toBe(201);
    const setCookie = first.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^__Host-pv_browser=[A-Za-z0-9_-]{22}; /);
    expect(setCookie.split('; ').slice(1).sort()).toEqual([
      'HttpOnly',
      'Path=/',
      'SameSite=Strict',
      'Secure',
    ]);
    const key = cookieOf(first).split('=')[1]!;
    // A sibling subdomain can set `pv_browser` for the parent domain, not `__Host-pv_browser`.
    const planted = await start(phone, { ...https, cookie: `pv_browser=${key}` });
    expect(planted.status).toBe(429);
    expect(planted.body.verification_id).toBeUndefined();
    const mine = await start(phone, { ...https, cookie: `__Host-pv_browser=${key}` });
    expect(mine.body).toMatchObject({ resumed: true, verification_id: first.body.verification_id });
  });

  // Nest takes the prefix with or without its slashes, and serves the routes at one path either way.
  it.each(['api', '/api/'])(
    'logs the URLs it serves with the prefix %j applied, and the webhook works there',
    async (prefix) => {
      const logger = new CapturingLogger();
      await boot(logger, prefix);
      const lines = logger.at('log').join('\n');
      expect(lines).toContain('client routes at /api/verification: POST /api/verification/start');
      expect(lines).toContain('GET /api/verification/status/:verification_id/events');
      expect(lines).toContain('webhook route at POST /api/verification/webhooks');
      await verifiedByWebhookAt('/api/verification', 'user-9');
    },
  );

  // Nest versions every route of an app with URI versioning, the module's too: the log names where they went.
  it('under URI versioning, logs the routes where Nest serves them (/api/v1/verification), and the webhook works', async () => {
    const logger = new CapturingLogger();
    await boot(logger, 'api', (app) =>
      app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' }),
    );
    const lines = logger.at('log').join('\n');
    expect(lines).toContain('client routes at /api/v1/verification: POST /api/v1/verification/start');
    expect(lines).toContain("the browser client's baseUrl is /api/v1/verification");
    expect(lines).toContain('webhook route at POST /api/v1/verification/webhooks');
    expect((await call(suite.host!.url, 'GET', '/api/v1/verification/methods')).status).toBe(200);
    expect((await call(suite.host!.url, 'GET', '/api/verification/methods')).status).toBe(404);
    await verifiedByWebhookAt('/api/v1/verification', 'user-10');
  });
});
