/**
 * Attack (lane attack-44b, re-attack of attack-44's cookie-path fix): the browser-key cookie's Path is
 * the route the start request matched "as the platform declared it", less `/start`. A multi-tenant host
 * that puts a route parameter in front of the module's routes (`RouterModule.register([{ path:
 * ':tenant', module: VerificationModule }])`, `app.setGlobalPrefix(':tenant')`, or `routes.prefix:
 * ':tenant/verification'`) serves them at `/acme/verification/*`, and the cookie is set on the literal
 * `Path=/:tenant/verification`, which no request path matches: the browser never sends it back. An
 * anonymous user's second start from the same browser (a reload, a second tab) is then refused by its
 * own resend cooldown (429 `resend_cooldown`) instead of being handed its pending verification, on
 * Express and Fastify alike. (global-prefix.ts says "a pattern with parameters is never a cookie's path:
 * the caller checks"; the caller does not.)
 *
 * The browser is emulated: the cookie goes back only to paths its Path matches (RFC 6265 §5.1.4).
 *
 * Expected: a Path the routes' requests match (the path before the first parameter, or the request's
 * own prefix). Medium (a real user refused by their own cooldown). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { Module, type INestApplication } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { RouterModule } from '@nestjs/core';
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

describe.each(PLATFORMS)('tenant param in the prefix and the cookie (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  it.each([
    ['global', 'global'],
    ['router', 'router'],
    ['option', 'option'],
  ])(
    '%s',
    async (shape) => {
      const opts = moduleOptions(suite.sb, { limits: {}, owner: undefined });
      @Module({
        imports: [
          EventEmitterModule.forRoot(),
          VerificationModule.forRoot(
            shape === 'option'
              ? { ...opts, routes: { ...opts.routes, prefix: ':tenant/verification' } }
              : opts,
          ),
          ...(shape === 'router'
            ? [RouterModule.register([{ path: ':tenant', module: VerificationModule }])]
            : []),
        ],
      })
      class HostModule {}
      const ref = await Test.createTestingModule({ imports: [HostModule] }).compile();
      const app: INestApplication =
        platform === 'fastify'
          ? ref.createNestApplication(new FastifyAdapter(), { rawBody: true, logger: false })
          : ref.createNestApplication({ rawBody: true, logger: false });
      if (shape === 'global') app.setGlobalPrefix(':tenant');
      await app.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${(app.getHttpServer().address() as { port: number }).port}`;
      const full = '/acme/verification/start';
      try {
        const jar = new Jar();
        const phone = nextPhone();
        const first = await call(
          url,
          'POST',
          full,
          { phone_number: phone, method: 'sms' },
          jar.headerFor(full),
        );
        expect(first.status).toBe(201);
        jar.take(first.headers.get('set-cookie'));
        const again = await call(
          url,
          'POST',
          full,
          { phone_number: phone, method: 'sms' },
          jar.headerFor(full),
        );
        expect({ status: again.status, cookiePath: jar.cookie?.path, body: again.body }).toMatchObject({
          status: 201,
          body: { resumed: true, verification_id: first.body.verification_id },
        });
      } finally {
        await app.close();
      }
    },
    60_000,
  );
});
