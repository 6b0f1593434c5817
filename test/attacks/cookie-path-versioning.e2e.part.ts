/**
 * Attack (lane attack-44): the browser-key cookie's Path is derived from the global prefix and
 * `routes.prefix` only. A host that turns on Nest's URI versioning (`app.enableVersioning({ type:
 * VersioningType.URI, defaultVersion: '1' })`, a common app-wide setting) serves the module's client
 * routes at `/v1/verification/*`, while the cookie is set on `Path=/verification`: a browser never
 * sends it back. An anonymous user's second start from the same browser (a reload, a second tab) is
 * then not resumed but refused by its own resend cooldown (or, with the cooldown off, paid again),
 * just as the trailing-slash finding of issue 44 did with one route.
 *
 * The browser is emulated: the cookie goes back only to paths its Path matches (RFC 6265 §5.1.4).
 *
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { Module, VersioningType, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { VerificationModule } from '../../src/module/verification.module.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call, PLATFORMS, type Platform } from '../support/verification-app.js';
import { moduleOptions, nextPhone } from '../webhooks/harness.js';

/** RFC 6265 path-match: whether a browser sends a cookie of `cookiePath` to `requestPath`. */
function pathMatches(cookiePath: string, requestPath: string): boolean {
  if (cookiePath === requestPath) return true;
  if (!requestPath.startsWith(cookiePath)) return false;
  return cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/';
}

/** What an emulated browser holds: one cookie and its Path. */
class Jar {
  cookie: { pair: string; path: string } | undefined;
  take(setCookie: string | null): void {
    if (!setCookie) return;
    const [pair, ...attributes] = setCookie.split('; ');
    const path = attributes.find((a) => a.startsWith('Path='))?.slice(5) ?? '/';
    this.cookie = { pair: pair!, path };
  }
  headerFor(path: string): Record<string, string> {
    return this.cookie && pathMatches(this.cookie.path, path) ? { cookie: this.cookie.pair } : {};
  }
}

describe.each(PLATFORMS)('URI versioning and the browser-key cookie (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let app: INestApplication | undefined;

  async function boot(): Promise<string> {
    @Module({
      imports: [
        EventEmitterModule.forRoot(),
        // No owner: anonymous callers, the browser key tells them apart (coalescing and cooldown on).
        VerificationModule.forRoot(moduleOptions(suite.sb, { limits: {}, owner: undefined })),
      ],
    })
    class HostModule {}
    const ref = await Test.createTestingModule({ imports: [HostModule] }).compile();
    app =
      platform === 'fastify'
        ? ref.createNestApplication(new FastifyAdapter(), { rawBody: true, logger: false })
        : ref.createNestApplication({ rawBody: true, logger: false });
    app.enableVersioning({ type: VersioningType.URI, defaultVersion: '1' });
    await app.listen(0, '127.0.0.1');
    return `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
  }

  it('the same browser starting the same number twice is handed its pending verification back', async () => {
    const url = await boot();
    try {
      const jar = new Jar();
      const path = '/v1/verification/start';
      const phone = nextPhone();
      const first = await call(
        url,
        'POST',
        path,
        { phone_number: phone, method: 'sms' },
        jar.headerFor(path),
      );
      expect(first.status).toBe(201);
      jar.take(first.headers.get('set-cookie'));
      const again = await call(
        url,
        'POST',
        path,
        { phone_number: phone, method: 'sms' },
        jar.headerFor(path),
      );
      expect({ status: again.status, cookiePath: jar.cookie?.path, body: again.body }).toMatchObject({
        status: 201,
        body: { resumed: true, verification_id: first.body.verification_id },
      });
    } finally {
      await app?.close();
    }
  });
});
