/**
 * `@InjectVerificationOptions()`, as a host uses it from the package root: its own provider reads the
 * route prefix forRootAsync fixed, and its subclass of `VerificationControllerBase` declares a
 * constructor (to inject a service of its own) and hands the options to `super()`.
 */
import 'reflect-metadata';
import { beforeAll, describe, expect, it } from '@jest/globals';
import { Controller, Get, Injectable } from '@nestjs/common';
import {
  InjectVerificationOptions,
  VerificationControllerBase,
  VerificationModule,
  VerificationService,
  type ResolvedVerificationOptions,
} from '../../src/index.js';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { call, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

@Injectable()
class FrontendLinks {
  constructor(@InjectVerificationOptions() private readonly options: ResolvedVerificationOptions) {}

  statusUrl(verificationId: string): string {
    return `/${this.options.routes.prefix}/status/${verificationId}`;
  }
}

@Controller('account/phone')
class AccountPhoneRoutes extends VerificationControllerBase {
  constructor(
    verification: VerificationService,
    @InjectVerificationOptions() options: ResolvedVerificationOptions,
    private readonly links: FrontendLinks,
  ) {
    super(verification, options);
  }

  @Get('links')
  linksOf(): { prefix: string; status: string; methods: string[]; limits: boolean } {
    const { routes, methods, limits } = this.options;
    return { prefix: routes.prefix, status: this.links.statusUrl('v1'), methods, limits: limits.enabled };
  }
}

describe('@InjectVerificationOptions()', () => {
  const suite = sandboxSuite({ freezeClock: false });
  let sb: VerificationSandbox;
  let host: TestApp;

  beforeAll(async () => {
    sb = suite.sb;
    host = await suite.boot({
      platform: 'express',
      module: VerificationModule.forRootAsync({
        routes: { prefix: 'phone' },
        useFactory: () => ({
          api: { baseUrl: sb.url, apiKey: sb.demoAccount.apiKey, apiSecret: sb.demoAccount.apiSecret },
          methods: ['sms'],
        }),
      }),
      controllers: [AccountPhoneRoutes],
      providers: [FrontendLinks],
    });
  });

  it("gives host code the resolved options: the prefix forRootAsync fixed, the factory's fields, defaults", async () => {
    expect(host.app.get(FrontendLinks).statusUrl('v1')).toBe('/phone/status/v1');
    const links = await call(host.url, 'GET', '/account/phone/links');
    expect(links.status).toBe(200);
    expect(links.body).toEqual({
      prefix: 'phone',
      status: '/phone/status/v1',
      methods: ['sms'],
      limits: true,
    });
  });

  it("lets a subclass with its own constructor serve the base's routes beside its own", async () => {
    const own = await call(host.url, 'GET', '/account/phone/methods');
    const module = await call(host.url, 'GET', '/phone/methods');
    expect(own.status).toBe(200);
    expect(own.body).toEqual(module.body);
    expect(own.body).toMatchObject({ methods: [expect.objectContaining({ method: 'sms' })] });
  });
});
