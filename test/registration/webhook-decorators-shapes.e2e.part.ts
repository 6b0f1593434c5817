/**
 * `webhooks.decorators` in both shapes of a registration: forRoot takes them with its options,
 * forRootAsync with its static route declaration (the factory's options come too late for a class
 * decorator). Either way the host's decorator is on the webhook controller, where a global host guard
 * reads it (as ThrottlerGuard reads SkipThrottle()); a registration without it stays closed.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import {
  ForbiddenException,
  Injectable,
  SetMetadata,
  type CanActivate,
  Version,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import { VerificationOptionsError } from '../../src/core/option-rules.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { RoutesOptions } from '../../src/options/routes.options.js';
import { moduleOptions, payloadFor, postWebhook, signed } from '../webhooks/harness.js';
import { createTestApp, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

const OPEN = 'test:open-webhook-route';
const Open = () => SetMetadata(OPEN, true);

/** Closes every webhook route but one its host decorator opened. */
@Injectable()
class ClosedUnlessOpenGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ url: string }>();
    if (!request.url.includes('webhooks')) return true;
    if (this.reflector.getAllAndOverride<boolean>(OPEN, [context.getHandler(), context.getClass()]))
      return true;
    throw new ForbiddenException('closed by the host');
  }
}

describe.each(PLATFORMS)('webhooks.decorators, forRoot and forRootAsync alike (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let host: TestApp | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  /** A decorator that returns a subclass carrying the metadata: the subclass is the controller served. */
  const replacing: ClassDecorator = (target) => {
    @Open()
    class Replaced extends (target as unknown as new () => object) {}
    return Replaced as never;
  };
  /** A decorator that returns nothing, as most do. */
  const silent: ClassDecorator = (target) => void Open()(target);
  /** A decorator that returns the class it decorated. */
  const returning: ClassDecorator = (target) => {
    Open()(target);
    return target;
  };
  it.each([
    ['forRoot', 'Open()', Open()],
    ['forRootAsync', 'Open()', Open()],
    ['forRoot', 'a subclass returned', replacing],
    ['forRootAsync', 'a subclass returned', replacing],
    ['forRoot', 'its target returned', returning],
    ['forRoot', 'nothing returned', silent],
    ['forRootAsync', 'nothing returned', silent],
    ['forRootAsync', 'its target returned', returning],
  ] as const)(
    '%s, %s: the host decorator is on the webhook controller; the registration without it is closed by the host guard',
    async (shape, _what, decorator) => {
      const sb = suite.sb;
      const open = await sb.createAccount({ balance: 100 });
      const closed = await sb.createAccount({ balance: 100 });
      const options = (name: string, account: typeof open): VerificationModuleOptions => ({
        ...moduleOptions(sb, {}, account),
        name,
        routes: { prefix: `${name}/verification` },
        webhooks: { secret: account.webhookSecret },
      });
      const opened = options('open', open);
      const openModule =
        shape === 'forRoot'
          ? VerificationModule.forRoot({
              ...opened,
              webhooks: { ...opened.webhooks, decorators: [decorator] },
            })
          : VerificationModule.forRootAsync({
              name: 'open',
              routes: { prefix: 'open/verification' },
              webhooks: { enabled: true, decorators: [decorator] },
              useFactory: () => opened,
            });
      host = await createTestApp({
        platform,
        module: openModule,
        imports: [VerificationModule.forRoot(options('closed', closed))],
        providers: [{ provide: APP_GUARD, useClass: ClosedUnlessOpenGuard }],
      });
      const delivery = (secret: string) =>
        signed(secret, payloadFor('verification.verified', '00000000-0000-4000-8000-000000000000'));
      const url = (name: string) => `${host!.url}/${name}/verification/webhooks`;
      expect((await postWebhook(url('open'), delivery(open.webhookSecret))).status).toBe(200);
      expect((await postWebhook(url('closed'), delivery(closed.webhookSecret))).status).toBe(403);
    },
  );
  it('forRootAsync, a decorator factory called in the factory too: the boot says only the static ones apply', async () => {
    const account = await suite.sb.createAccount({ balance: 100 });
    const options: VerificationModuleOptions = {
      ...moduleOptions(suite.sb, {}, account),
      webhooks: { secret: account.webhookSecret, decorators: [Open()] },
    };
    const module = VerificationModule.forRootAsync({
      webhooks: { enabled: true, decorators: [Open()] },
      useFactory: () => options,
    });
    await expect(createTestApp({ platform, module })).rejects.toThrow(
      /"webhooks\.decorators" holds decorators other than the ones given statically/,
    );
  });
});

describe('webhooks.decorators that is not a class decorator', () => {
  /** Imports a registration of `shape` with `decorators` (a plain-JS host's: TypeScript refuses most of these). */
  const declare = (shape: 'forRoot' | 'forRootAsync', decorators: unknown[]) => () =>
    shape === 'forRoot'
      ? VerificationModule.forRoot({
          api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' },
          webhooks: {
            secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
            decorators: decorators as ClassDecorator[],
          },
        })
      : VerificationModule.forRootAsync({
          webhooks: { enabled: true, decorators: decorators as ClassDecorator[] },
          useFactory: () => ({ api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' } }),
        });
  /** A decorator factory, as SkipThrottle is: `skipLike` given where `skipLike()` was meant. */
  const skipLike = (): ((target: object) => void) => () => undefined;
  // Nest's Version() decorates handlers only: applied to a class it throws a bare TypeError at import.
  const threw = /threw on the webhook controller class \(TypeError: .+\): it must be a class decorator/;
  // Each wrong entry named by its own index, whatever comes before it, in both shapes.
  const wrongEntries: [
    shape: 'forRoot' | 'forRootAsync',
    what: string,
    given: unknown[],
    index: number,
    why: RegExp,
  ][] = [
    ['forRoot', 'a method decorator', [Open(), Version('2')], 1, threw],
    ['forRootAsync', 'a method decorator', [Open(), Version('2')], 1, threw],
    [
      'forRoot',
      'a factory given uncalled',
      [Open(), skipLike],
      1,
      /returned a function instead of decorating/,
    ],
    ['forRootAsync', 'a factory given uncalled', [skipLike], 0, /returned a function instead of decorating/],
    [
      'forRoot',
      'not a function, then a throwing one',
      [Open(), 'x', Version('2')],
      1,
      /is not a function \(string\)/,
    ],
    ['forRootAsync', 'not a function', [Open(), null], 1, /is not a function \(null\)/],
    ['forRoot', 'an async decorator', [Open(), Open(), async () => undefined], 2, /returned a promise/],
    ['forRootAsync', 'an async decorator', [async () => undefined], 0, /returned a promise/],
    [
      'forRoot',
      "an error whose message can't be read",
      [
        () => {
          throw Object.defineProperty(new Error('x'), 'message', {
            get: () => {
              throw new Error('no');
            },
          });
        },
      ],
      0,
      /threw on the webhook controller class \(Error \(its name or message could not be read\)\)/,
    ],
  ];
  it.each(wrongEntries)(
    '%s, %s: the import fails naming the entry by its index',
    (shape, _what, given, index, why) => {
      expect(declare(shape, given)).toThrow(VerificationOptionsError);
      expect(declare(shape, given)).toThrow(`option "webhooks.decorators[${index}]"`);
      expect(declare(shape, given)).toThrow(why);
    },
  );

  // A plain-JS host's or one whose declaration is in a variable: TypeScript checks only a literal's keys.
  it.each([
    [
      'a misspelt key',
      { webhooks: { enabled: true, decorator: [Open()] } },
      'webhooks.decorator',
      /is not an option \(did you mean "webhooks\.decorators"\?\)/,
    ],
    ['a key that is no option', { routes: { prefix: 'v', guard: true } }, 'routes.guard', /is not an option/],
    [
      'decorators as a Set',
      { webhooks: { enabled: true, decorators: new Set([Open()]) } },
      'webhooks.decorators',
      /must be an array/,
    ],
    ['routes not an object', { routes: 'v1' }, 'routes', /must be an object/],
  ])('forRootAsync, %s beside the factory: the import fails naming it', (_what, declaration, field, why) => {
    const declare = () =>
      VerificationModule.forRootAsync({
        ...(declaration as object),
        useFactory: () => ({ api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' } }),
      });
    expect(declare).toThrow(VerificationOptionsError);
    expect(declare).toThrow(`option "${field}" `);
    expect(declare).toThrow(why);
  });

  it("forRootAsync, one routes object shared with the factory: imports, its other options left to the factory's", () => {
    const routes: RoutesOptions = { prefix: 'shop/verification', allowedOrigins: ['https://shop.example'] };
    const declare = () =>
      VerificationModule.forRootAsync({
        routes,
        useFactory: () => ({ api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' }, routes }),
      });
    expect(declare).not.toThrow();
  });

  it('keeps the error a decorator threw as the cause', () => {
    const boom = new RangeError('no');
    const throwing = () => {
      throw boom;
    };
    expect(declare('forRootAsync', [throwing])).toThrow(expect.objectContaining({ cause: boom }));
  });
});
