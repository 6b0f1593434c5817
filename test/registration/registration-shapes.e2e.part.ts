import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type DynamicModule, type Type } from '@nestjs/common';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import { VerificationOptionsError } from '../../src/core/option-rules.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import type { VerificationOptionsFactory } from '../../src/module/verification.module-definition.js';
import {
  getVerificationToken,
  InjectPhoneChange,
  InjectVerificationAccountService,
  InjectVerificationErasure,
  InjectVerificationHistory,
  InjectVerificationLedger,
  InjectVerificationService,
  InjectVerificationStore,
} from '../../src/module/verification-registration.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { PhoneChange } from '../../src/guard/phone-change.js';
import { VerificationHistory } from '../../src/history/verification-history.service.js';
import { VerificationLedger } from '../../src/ledger/verification-ledger.service.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { VerificationErasure } from '../../src/verification/verification-erasure.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { CapturingLogger } from '../webhooks/harness.js';
import { call, createTestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('the shapes of a registration', () => {
  const SECRET = `whsec_${Buffer.from('registration-shapes-secret-0123').toString('base64')}`;
  /** One option out of its bounds, which every shape must refuse at boot by its name. */
  const BAD = { limits: { startPerIp: { points: 0, windowMs: 1000 } } };

  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let api: VerificationModuleOptions['api'];
  /** What the factories give: the test sets it before each boot. */
  let given: VerificationModuleOptions;

  @Injectable()
  class OptionsFactory implements VerificationOptionsFactory {
    createVerificationOptions(): VerificationModuleOptions {
      return given;
    }
  }
  @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
  class OptionsFactoryModule {}

  /** The registration in each shape a host can write, from the options `given` holds at boot. */
  const SHAPES: [string, () => DynamicModule, string | undefined][] = [
    ['forRoot', () => VerificationModule.forRoot(given), undefined],
    [
      'forRootAsync useFactory',
      () => VerificationModule.forRootAsync({ useFactory: () => given }),
      undefined,
    ],
    ['forRootAsync useClass', () => VerificationModule.forRootAsync({ useClass: OptionsFactory }), undefined],
    [
      'forRootAsync useExisting',
      () => VerificationModule.forRootAsync({ imports: [OptionsFactoryModule], useExisting: OptionsFactory }),
      undefined,
    ],
    ['named forRoot', () => VerificationModule.forRoot({ ...given, name: 'north' }), 'north'],
    [
      'named forRootAsync',
      () =>
        VerificationModule.forRootAsync({ name: 'north', useFactory: () => ({ ...given, name: 'north' }) }),
      'north',
    ],
  ];

  async function compile(verification: DynamicModule) {
    return Test.createTestingModule({ imports: [EventEmitterModule.forRoot(), verification] }).compile();
  }

  beforeAll(async () => {
    sb = suite.sb;
    api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
  });

  describe.each(SHAPES)('registration given as %s', (_shape, registration, name) => {
    it('fails the boot on a bad option, naming it', async () => {
      given = { api, ...BAD };
      const error = await compile(registration()).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VerificationOptionsError);
      expect((error as VerificationOptionsError).field).toBe('limits.startPerIp.points');
      expect(String((error as Error).message)).toContain('"limits.startPerIp.points"');
    });

    it('serves the options it was given', async () => {
      given = { api, methods: ['sms', 'flash_call'] };
      const ref = await compile(registration());
      try {
        const service = ref.get<VerificationService>(getVerificationToken(VerificationService, name));
        expect((await service.methods()).map((m) => m.method)).toEqual(['sms', 'flash_call']);
      } finally {
        await ref.close();
      }
    });
  });

  describe('a store option that is no store (a URL given as a bare string, null from a config file)', () => {
    it.each([
      ['unnamed', 'redis://127.0.0.1:6379', undefined],
      ['named', 'redis://127.0.0.1:6379', 'north'],
      ['unnamed', null, undefined],
      ['named', null, 'north'],
    ])('fails the boot of the %s registration naming store (%p)', async (_kind, store, name) => {
      const error = await compile(
        VerificationModule.forRoot({ api, name, store: store as never, routes: { prefix: 'v' } }),
      ).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(VerificationOptionsError);
      expect((error as VerificationOptionsError).field).toBe('store');
    });
  });

  describe('the Inject… decorators', () => {
    it("give a host's class each service of the registration it names, and the unnamed one's without a name", async () => {
      // Declared here, not at import: the decorators run in this test.
      const hostOf = (name?: string) => {
        @Injectable()
        class Host {
          constructor(
            @InjectVerificationService(name) readonly service: VerificationService,
            @InjectVerificationAccountService(name) readonly account: VerificationAccountService,
            @InjectVerificationStore(name) readonly store: VerificationStore,
            @InjectVerificationHistory(name) readonly history: VerificationHistory,
            @InjectVerificationLedger(name) readonly ledger: VerificationLedger,
            @InjectVerificationErasure(name) readonly erasure: VerificationErasure,
            @InjectPhoneChange(name) readonly phoneChange: PhoneChange,
          ) {}
        }
        return Host;
      };
      const [North, South, Unnamed] = [hostOf('north'), hostOf('south'), hostOf()];
      const ref = await Test.createTestingModule({
        imports: [
          EventEmitterModule.forRoot(),
          VerificationModule.forRoot({ api }),
          VerificationModule.forRoot({ api, name: 'north', routes: { prefix: 'north' } }),
          VerificationModule.forRoot({ api, name: 'south', routes: { prefix: 'south' } }),
        ],
        providers: [North, South, Unnamed],
      }).compile();
      try {
        const [north, south, unnamed] = [ref.get(North), ref.get(South), ref.get(Unnamed)];
        const TOKENS = {
          service: VerificationService,
          account: VerificationAccountService,
          store: VerificationStore,
          history: VerificationHistory,
          ledger: VerificationLedger,
          erasure: VerificationErasure,
          phoneChange: PhoneChange,
        } as const;
        // Compared by identity into booleans: a failing diff of two services would print the whole app.
        const seen = Object.entries(TOKENS).map(([field, token]) => {
          const of = (host: typeof north) => host[field as keyof typeof TOKENS] as unknown;
          return {
            field,
            distinct: new Set([of(north), of(south), of(unnamed)]).size === 3,
            north: of(north) === ref.get(getVerificationToken(token, 'north')),
            south: of(south) === ref.get(getVerificationToken(token, 'south')),
            kind:
              field === 'store' ||
              (of(north) instanceof (token as Type) && of(unnamed) instanceof (token as Type)),
          };
        });
        expect(seen).toEqual(
          Object.keys(TOKENS).map((field) => ({
            field,
            distinct: true,
            north: true,
            south: true,
            kind: true,
          })),
        );
      } finally {
        await ref.close();
      }
    });
  });

  describe('the URLs a registration logs at boot follow its options', () => {
    /** The boot's lines naming what is served (`all`: every line the module logged at the log level). */
    async function servedLines(options: Partial<VerificationModuleOptions>, all = false): Promise<string[]> {
      const logger = new CapturingLogger();
      const host = await createTestApp({ platform: 'express', module: { api, logger, ...options } });
      await host.close();
      return logger
        .at('log')
        .filter((line) => all || /^(client routes|webhook route) at /.test(line))
        .map((line) => line.replace(/ \(.*\)$/, ''));
    }

    it('client routes with their status stream, and the webhook route', async () => {
      expect(await servedLines({ webhooks: { secret: SECRET } })).toEqual([
        'client routes at /verification: POST /verification/start, POST /verification/check, GET /verification/status/:verification_id, GET /verification/status/:verification_id/events, POST /verification/switch, POST /verification/cancel, GET /verification/methods',
        'webhook route at POST /verification/webhooks',
      ]);
    });

    it('without the status stream, the routes line names no events route; without webhooks, no webhook line', async () => {
      expect(await servedLines({ statusStream: { enabled: false } })).toEqual([
        'client routes at /verification: POST /verification/start, POST /verification/check, GET /verification/status/:verification_id, POST /verification/switch, POST /verification/cancel, GET /verification/methods',
      ]);
    });

    it('with the client routes off, only the webhook line; with neither, no line', async () => {
      expect(await servedLines({ routes: { enabled: false }, webhooks: { secret: SECRET } })).toEqual([
        'webhook route at POST /verification/webhooks',
      ]);
      expect(await servedLines({ routes: { enabled: false } })).toEqual([]);
    });

    it('a registration serving no route logs no line at all at the log level', async () => {
      expect(await servedLines({ routes: { enabled: false } }, true)).toEqual([]);
    });
  });

  describe('test numbers given to a registration', () => {
    it("are played by the module: a test number's start never reaches the API, another number's does", async () => {
      const reviewer = '+79990000042';
      const host = await createTestApp({
        platform: 'express',
        module: { api, testNumbers: { numbers: [{ phoneNumber: reviewer, code: '246810' }] } },
      });
      try {
        const starts = () => sb.requestCount('POST /v1/verify');
        const before = starts();
        const test = await call(host.url, 'POST', '/verification/start', {
          phone_number: reviewer,
          method: 'sms',
        });
        expect(test.status).toBe(201);
        expect(starts()).toBe(before);
        const real = await call(host.url, 'POST', '/verification/start', {
          phone_number: '+79123400042',
          method: 'sms',
        });
        expect(real.status).toBe(201);
        expect(starts()).toBe(before + 1);
      } finally {
        await host.close();
      }
    });
  });
});
