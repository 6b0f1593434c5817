import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Injectable, Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { EventEmitterModule } from '@nestjs/event-emitter';
import { Test } from '@nestjs/testing';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import { VerificationApiClient } from '../../src/api/verification-api.client.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import type { VerificationOptionsFactory } from '../../src/module/verification.module-definition.js';
import { call, createTestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

describe('VerificationModule registration and its options', () => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let api: VerificationModuleOptions['api'];

  beforeAll(async () => {
    sb = suite.sb;
    api = { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret };
  });

  async function compile(verification: DynamicModule, extraImports: DynamicModule[] = []) {
    const ref = await Test.createTestingModule({
      imports: [EventEmitterModule.forRoot(), verification, ...extraImports],
    }).compile();
    return ref;
  }

  /** Boots, calls the methods route, and closes: proves the module serves with these options. */
  async function servesMethods(verification: DynamicModule, prefix = '/verification'): Promise<number> {
    const host = await createTestApp({ platform: 'express', module: verification });
    try {
      return (await call(host.url, 'GET', `${prefix}/methods`)).status;
    } finally {
      await host.close();
    }
  }

  @Injectable()
  class OptionsFactory implements VerificationOptionsFactory {
    createVerificationOptions(): VerificationModuleOptions {
      return { api, methods: ['sms'] };
    }
  }
  @Module({ providers: [OptionsFactory], exports: [OptionsFactory] })
  class OptionsFactoryModule {}

  describe('VerificationModule registration', () => {
    it('forRoot provides the service, the client and the store', async () => {
      const ref = await compile(VerificationModule.forRoot({ api }));
      expect(ref.get(VerificationService)).toBeInstanceOf(VerificationService);
      expect(ref.get(VerificationApiClient)).toBeInstanceOf(VerificationApiClient);
      expect(ref.get(VerificationStore)).toBeInstanceOf(MemoryStore);
      await ref.close();
      expect(await servesMethods(VerificationModule.forRoot({ api }))).toBe(200);
    });

    it('forRootAsync with useFactory and @nestjs/config', async () => {
      const module = VerificationModule.forRootAsync({
        imports: [
          ConfigModule.forRoot({
            ignoreEnvFile: true,
            load: [
              () => ({
                VERIFICATION_API_URL: api.baseUrl,
                VERIFICATION_API_KEY: api.apiKey,
                VERIFICATION_API_SECRET: api.apiSecret,
              }),
            ],
          }),
        ],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          api: {
            baseUrl: config.getOrThrow<string>('VERIFICATION_API_URL'),
            apiKey: config.getOrThrow<string>('VERIFICATION_API_KEY'),
            apiSecret: config.getOrThrow<string>('VERIFICATION_API_SECRET'),
          },
        }),
      });
      expect(await servesMethods(module)).toBe(200);
    });

    it('forRootAsync with useClass', async () => {
      const ref = await compile(VerificationModule.forRootAsync({ useClass: OptionsFactory }));
      expect(await ref.get(VerificationService).methods()).toEqual([
        expect.objectContaining({ method: 'sms' }),
      ]);
      await ref.close();
    });

    it('forRootAsync with useExisting', async () => {
      const ref = await compile(
        VerificationModule.forRootAsync({ imports: [OptionsFactoryModule], useExisting: OptionsFactory }),
      );
      expect(await ref.get(VerificationService).methods()).toEqual([
        expect.objectContaining({ method: 'sms' }),
      ]);
      await ref.close();
    });

    it('forRootAsync takes the route prefix statically, and puts the webhook route under it as forRoot does', async () => {
      const module = VerificationModule.forRootAsync({
        routes: { prefix: '/phone/' },
        webhooks: { enabled: true },
        useFactory: () => ({ api, webhooks: { secret: sb.demoAccount.webhookSecret } }),
      });
      const host = await createTestApp({ platform: 'express', module });
      try {
        expect((await call(host.url, 'GET', '/phone/methods')).status).toBe(200);
        const unsigned = { type: 'verification.verified', data: { request_id: 'x' } };
        expect((await call(host.url, 'POST', '/phone/webhooks', unsigned)).status).toBe(401);
        expect((await call(host.url, 'POST', '/verification/webhooks', unsigned)).status).toBe(404);
      } finally {
        await host.close();
      }
    });

    it('isGlobal makes the service injectable in modules that do not import it', async () => {
      @Injectable()
      class Consumer {
        constructor(readonly verification: VerificationService) {}
      }
      @Module({ providers: [Consumer] })
      class FeatureModule {}
      const ref = await Test.createTestingModule({
        imports: [
          EventEmitterModule.forRoot(),
          VerificationModule.forRoot({ api, isGlobal: true }),
          FeatureModule,
        ],
      }).compile();
      expect(ref.get(Consumer).verification).toBeInstanceOf(VerificationService);
      await ref.close();
    });

    it('without isGlobal the service is not visible to other modules', async () => {
      @Injectable()
      class Consumer {
        constructor(readonly verification: VerificationService) {}
      }
      @Module({ providers: [Consumer] })
      class FeatureModule {}
      await expect(
        Test.createTestingModule({
          imports: [EventEmitterModule.forRoot(), VerificationModule.forRoot({ api }), FeatureModule],
        }).compile(),
      ).rejects.toThrow(/VerificationService/);
    });

    it('the client routes can be switched off for hosts that mount the service themselves', async () => {
      expect(await servesMethods(VerificationModule.forRoot({ api, routes: { enabled: false } }))).toBe(404);
    });

    it('the client routes and the webhook route are switched on and off each by its own option', async () => {
      const secret = `whsec_${Buffer.from('module-registration-secret-01234').toString('base64')}`;
      const served = async (options: Partial<VerificationModuleOptions>): Promise<[number, number]> => {
        const host = await createTestApp({
          platform: 'express',
          module: VerificationModule.forRoot({ api, ...options }),
        });
        try {
          const methods = await call(host.url, 'GET', '/verification/methods');
          const webhook = await call(host.url, 'POST', '/verification/webhooks', {
            type: 'verification.verified',
          });
          return [methods.status, webhook.status];
        } finally {
          await host.close();
        }
      };
      // An unsigned delivery is refused (401) where the webhook route is served; 404 where it is not.
      expect(await served({ routes: { enabled: false }, webhooks: { secret } })).toEqual([404, 401]);
      expect(await served({ webhooks: { secret, enabled: false } })).toEqual([200, 404]);
    });

    it('a store the host gives is used and not closed by the module', async () => {
      const store = new MemoryStore({ clock: () => sb.now() });
      const ref = await compile(VerificationModule.forRoot({ api, store }));
      expect(ref.get(VerificationStore)).toBe(store);
      await ref.close();
      await store.set('k', 'v', 1000);
      expect(await store.get('k')).toBe('v');
      await store.close();
    });

    it.each([
      ['undici', 0],
      ['axios', 1],
    ] as const)(
      'api.transport %s: requests go through HTTP_PROXY %i time(s) per call (axios honours it, undici does not)',
      async (transport, throughProxy) => {
        // A forward proxy that counts what it relays: what a host on `transport: 'axios'` sets HTTP_PROXY for.
        let relayed = 0;
        const proxy = http.createServer((req, res) => {
          relayed++;
          const target = new URL(req.url!);
          const upstream = http.request(
            {
              host: target.hostname,
              port: target.port,
              path: target.pathname + target.search,
              method: req.method,
              headers: req.headers,
            },
            (answer) => {
              res.writeHead(answer.statusCode!, answer.headers);
              answer.pipe(res);
            },
          );
          req.pipe(upstream);
        });
        await new Promise<void>((done) => proxy.listen(0, '127.0.0.1', done));
        const saved = {
          HTTP_PROXY: process.env.HTTP_PROXY,
          NO_PROXY: process.env.NO_PROXY,
          no_proxy: process.env.no_proxy,
        };
        process.env.HTTP_PROXY = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
        delete process.env.NO_PROXY;
        delete process.env.no_proxy;
        const ref = await compile(VerificationModule.forRoot({ api: { ...api, transport } }));
        try {
          const balance = await ref.get(VerificationApiClient).getBalance();
          expect(balance.balance.amount).toBeGreaterThan(0);
          expect(relayed).toBe(throughProxy);
        } finally {
          await ref.close();
          for (const [key, value] of Object.entries(saved))
            if (value === undefined) delete process.env[key];
            else process.env[key] = value;
          proxy.closeAllConnections();
          await new Promise((done) => proxy.close(done));
        }
      },
    );

    it('fails at boot without EventEmitterModule, saying what to add', async () => {
      await expect(
        Test.createTestingModule({ imports: [VerificationModule.forRoot({ api })] }).compile(),
      ).rejects.toThrow(/EventEmitterModule\.forRoot\(\)/);
    });
  });

  describe('VerificationModule options are validated at boot', () => {
    const cases: [string, () => VerificationModuleOptions, RegExp][] = [
      ['api missing', () => ({}) as VerificationModuleOptions, /"api" is required/],
      ['api.baseUrl not a URL', () => ({ api: { ...api, baseUrl: 'localhost:4010' } }), /"api\.baseUrl"/],
      ['api.apiKey empty', () => ({ api: { ...api, apiKey: '' } }), /"api\.apiKey"/],
      ['api.timeoutMs negative', () => ({ api: { ...api, timeoutMs: -1 } }), /"api\.timeoutMs"/],
      ['api.transport unknown', () => ({ api: { ...api, transport: 'fetch' as never } }), /"api\.transport"/],
      [
        'api.transport node (dropped)',
        () => ({ api: { ...api, transport: 'node' as never } }),
        /"api\.transport"/,
      ],
      ['unknown method', () => ({ api, methods: ['sms', 'fax'] as never }), /"methods\[1\]"/],
      [
        'bad country',
        () => ({ api, phone: { allowedCountries: ['Russia'] } }),
        /"phone\.allowedCountries\[0\]"/,
      ],
      [
        'bad limit',
        () => ({ api, limits: { startPerIp: { points: 0, windowMs: 1000 } } }),
        /"limits\.startPerIp\.points"/,
      ],
      ['bad webhook secret', () => ({ api, webhooks: { secret: 'hunter2' } }), /"webhooks\.secret"/],
      ['expiry above 600', () => ({ api, expirySeconds: 900 }), /"expirySeconds"/],
      ['owner not a function', () => ({ api, owner: 'me' as never }), /"owner"/],
    ];
    it.each(cases)('%s', async (_name, options, message) => {
      await expect(compile(VerificationModule.forRoot(options()))).rejects.toThrow(message);
    });

    it('never echoes the API secret in a validation message', async () => {
      const secret = 'sk_live_do_not_print_me_0123456789';
      const error = await compile(
        VerificationModule.forRoot({ api: { ...api, apiSecret: secret, baseUrl: 'nope' } }),
      ).catch((e: Error) => e);
      expect(String((error as Error).message)).not.toContain(secret);
      expect(String((error as Error).stack)).not.toContain(secret);
    });

    it('forRootAsync validates too, naming the field', async () => {
      await expect(
        compile(
          VerificationModule.forRootAsync({ useFactory: async () => ({ api: { ...api, apiSecret: '' } }) }),
        ),
      ).rejects.toThrow(/"api\.apiSecret"/);
    });
  });
});
