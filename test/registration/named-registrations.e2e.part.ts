/**
 * Several accounts in one app: named registrations (`forRoot({ name })`, `forRootAsync({ name })`),
 * each with its own routes prefix, webhook route and secret, limits and store; their services
 * injected by name or bound to a feature module with `forFeature(name)`; events saying which
 * registration they come from. And `webhooks.decorators`: a host's class decorators on the webhook
 * controller (the way `SkipThrottle()` is applied), proven with a host guard that reads them.
 */
import { afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import {
  Body,
  Controller,
  ForbiddenException,
  Injectable,
  Module,
  Post,
  SetMetadata,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import { APP_GUARD, Reflector } from '@nestjs/core';
import type { VerificationSandbox } from '../../src/testing/index.js';
import { VerificationModule } from '../../src/module/verification.module.js';
import { InjectVerificationOptions } from '../../src/module/inject-verification-options.decorator.js';
import type { ResolvedVerificationOptions } from '../../src/options/verification.options.js';
import {
  InjectVerificationAccountService,
  InjectVerificationService,
  InjectVerificationStore,
  registrationStore,
} from '../../src/module/verification-registration.js';
import { VerificationService } from '../../src/verification/verification.service.js';
import type { VerificationAccountService } from '../../src/account/verification-account.service.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import type { VerificationModuleOptions } from '../../src/options/verification.options.js';
import { apiCheck } from '../journeys/journey-host.js';
import { moduleOptions, payloadFor, postWebhook, signed } from '../webhooks/harness.js';
import { call, createTestApp, PLATFORMS, type Platform, type TestApp } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';

/** The host's services using both registrations by name. */
@Controller('brands')
class BrandsController {
  constructor(
    @InjectVerificationService('north') private readonly north: VerificationService,
    @InjectVerificationService('south') private readonly south: VerificationService,
    @InjectVerificationAccountService('south') private readonly southAccount: VerificationAccountService,
    @InjectVerificationStore('north') private readonly northStore: VerificationStore,
  ) {}

  @Post('start')
  async start(@Body() body: { brand: 'north' | 'south'; phone: string }) {
    const service = body.brand === 'north' ? this.north : this.south;
    const view = await service.start({ phoneNumber: body.phone, method: 'sms', owner: 'u1' });
    return { method: view.method, status: view.status };
  }

  @Post('balance')
  async balance() {
    return {
      south: (await this.southAccount.getBalance()).amount,
      northNow: this.northStore.now() > 0,
    };
  }
}

/** A feature module bound to one registration: it injects VerificationService by class. */
@Controller('south-feature')
class SouthFeatureController {
  constructor(private readonly verification: VerificationService) {}

  @Post('start')
  async start(@Body() body: { phone: string }) {
    return {
      status: (await this.verification.start({ phoneNumber: body.phone, method: 'sms', owner: 'u2' })).status,
    };
  }
}
@Module({ imports: [VerificationModule.forFeature('south')], controllers: [SouthFeatureController] })
class SouthFeatureModule {}

/** A host decorator and a global host guard that reads it (what SkipThrottle and ThrottlerGuard do). */
const OPEN = 'test:open-route';
const Open = () => SetMetadata(OPEN, true);
@Injectable()
class ClosedUnlessOpenGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ url: string }>();
    // The module's client routes stay reachable; only the webhook routes are under test here.
    if (!request.url.includes('webhooks')) return true;
    if (this.reflector.getAllAndOverride<boolean>(OPEN, [context.getHandler(), context.getClass()]))
      return true;
    throw new ForbiddenException('closed by the host');
  }
}

let serial = 0;
const phoneNumber = () =>
  `+7916222${String(process.pid % 100).padStart(2, '0')}${String(++serial).padStart(2, '0')}`;

describe.each(PLATFORMS)('named registrations (%s)', (platform: Platform) => {
  const suite = sandboxSuite();
  let sb: VerificationSandbox;
  let host: TestApp | undefined;
  const accounts: Record<string, { apiKey: string; apiSecret: string; webhookSecret: string }> = {};

  beforeAll(async () => {
    sb = suite.sb;
  });
  afterEach(async () => {
    await host?.close();
    host = undefined;
  });

  async function registration(
    name: string,
    extra: Partial<VerificationModuleOptions> = {},
  ): Promise<VerificationModuleOptions> {
    const account = await sb.createAccount({ balance: name === 'south' ? 77 : 100 });
    accounts[name] = account;
    return {
      ...moduleOptions(sb, extra, account),
      name,
      routes: { prefix: `${name}/verification` },
      webhooks: { secret: account.webhookSecret, ...extra.webhooks },
    };
  }

  it.each([
    ['routes.prefix', { prefix: 'shared/verification' }, {}],
    // Each registration's client routes apart, their webhook on one absolute path (written with its slash).
    ['webhooks.path', {}, { path: '/shared/webhooks' }],
  ])(
    'two registrations on one path (%s) fail the boot naming both, before any route is declared',
    async (_, routes, webhooks) => {
      const north = await registration('north');
      const south = await registration('south');
      const booting = createTestApp({
        platform,
        module: VerificationModule.forRoot({
          ...north,
          routes: { ...north.routes, ...routes },
          webhooks: { ...north.webhooks, enabled: true, ...webhooks },
        }),
        imports: [
          VerificationModule.forRoot({
            ...south,
            routes: { ...south.routes, ...routes },
            webhooks: { ...south.webhooks, enabled: true, ...webhooks },
          }),
        ],
      });
      await expect(booting).rejects.toThrow(/registration "north" and registration "south" the same path/);
      // A path of its own each: the same two boot.
      host = await createTestApp({
        platform,
        module: VerificationModule.forRoot(north),
        imports: [VerificationModule.forRoot(south)],
      });
      expect((await call(host.url, 'POST', '/south/verification/start', { phone_number: 'x' })).status).toBe(
        400,
      );
    },
  );

  it('two accounts side by side: own routes, webhook route and secret, limits and store; services by name; events say which', async () => {
    const north = await registration('north', {
      limits: { startPerIp: { points: 1, windowMs: 3_600_000 }, pumping: false, spendCap: false },
    });
    const south = await registration('south');
    host = await createTestApp({
      platform,
      module: VerificationModule.forRoot(north),
      imports: [
        VerificationModule.forRootAsync({
          name: 'south',
          routes: { prefix: 'south/verification' },
          webhooks: { enabled: true },
          useFactory: () => south,
        }),
        SouthFeatureModule,
      ],
      controllers: [BrandsController],
    });
    for (const name of ['north', 'south'])
      await sb.updateAccount(accounts[name]!.apiKey, {
        webhookUrl: `${host.url}/${name}/verification/webhooks`,
      });

    // Each registration's routes start on its own account.
    const northPhone = phoneNumber();
    const southPhone = phoneNumber();
    expect(
      (await call(host.url, 'POST', '/north/verification/start', { phone_number: northPhone, method: 'sms' }))
        .status,
    ).toBe(201);
    expect(
      (await call(host.url, 'POST', '/south/verification/start', { phone_number: southPhone, method: 'sms' }))
        .status,
    ).toBe(201);
    const [northSession] = sb.sessionsFor(northPhone);
    const [southSession] = sb.sessionsFor(southPhone);
    // north's own limit (one start per IP): only north refuses.
    expect(
      (
        await call(host.url, 'POST', '/north/verification/start', {
          phone_number: phoneNumber(),
          method: 'sms',
        })
      ).status,
    ).toBe(429);
    expect(
      (
        await call(host.url, 'POST', '/south/verification/start', {
          phone_number: phoneNumber(),
          method: 'sms',
        })
      ).status,
    ).toBe(201);

    // Webhooks come to each registration's own route, signed with its own secret; events say which.
    for (const [name, session] of [
      ['north', northSession!],
      ['south', southSession!],
    ] as const) {
      await sb.deliver(session.request_id);
      await apiCheck(
        sb,
        accounts[name]!.apiKey,
        session.request_id,
        String(sb.getSession(session.request_id)!.code),
      );
    }
    await sb.webhooksIdle();
    const verified = host.events.filter((e) => e.event === 'verification.verified');
    expect(verified.map((e) => [e.phoneNumber, e.registration, e.source]).sort()).toEqual(
      [
        [northPhone, 'north', 'webhook'],
        [southPhone, 'south', 'webhook'],
      ].sort(),
    );
    // A delivery signed with north's secret is refused on south's route.
    const forged = signed(
      accounts.north!.webhookSecret,
      payloadFor('verification.verified', southSession!.request_id),
    );
    expect((await postWebhook(`${host.url}/south/verification/webhooks`, forged)).status).toBe(401);

    // Services by name, and a feature module bound to one registration.
    const byName = await call(host.url, 'POST', '/brands/start', { brand: 'south', phone: phoneNumber() });
    expect(byName.body).toMatchObject({ method: 'sms', status: 'sent' });
    const balances = (await call(host.url, 'POST', '/brands/balance', {})).body;
    expect(balances.northNow).toBe(true);
    // south's account (77 RUB at the start, less what its sessions were charged), not north's (100).
    expect(balances.south).toBeLessThanOrEqual(77);
    expect(balances.south).toBeGreaterThan(60);
    const featurePhone = phoneNumber();
    expect((await call(host.url, 'POST', '/south-feature/start', { phone: featurePhone })).status).toBe(201);
    const [featureSession] = sb.sessionsFor(featurePhone);
    // It went out on south's account: south's API key sees it, north's does not.
    const auth = (name: string) =>
      `Basic ${Buffer.from(`${accounts[name]!.apiKey}:${accounts[name]!.apiSecret}`).toString('base64')}`;
    const read = (name: string) =>
      fetch(`${sb.url}/v1/verify/${featureSession!.request_id}`, {
        headers: { authorization: auth(name) },
      }).then((r) => r.status);
    expect(await read('south')).toBe(200);
    expect(await read('north')).toBe(404);
  });

  it('webhooks.decorators: the host decorator on the webhook controller is what its global guard reads', async () => {
    const open = await registration('open', { webhooks: { decorators: [Open()] } as never });
    const closed = await registration('closed');
    host = await createTestApp({
      platform,
      module: VerificationModule.forRoot(open),
      imports: [VerificationModule.forRoot(closed)],
      providers: [{ provide: APP_GUARD, useClass: ClosedUnlessOpenGuard }],
    });
    const delivery = (name: string) =>
      signed(
        accounts[name]!.webhookSecret,
        payloadFor('verification.verified', '00000000-0000-4000-8000-000000000000'),
      );
    expect((await postWebhook(`${host.url}/open/verification/webhooks`, delivery('open'))).status).toBe(200);
    const refused = await postWebhook(`${host.url}/closed/verification/webhooks`, delivery('closed'));
    expect(refused.status).toBe(403);
  });

  it('operational events say which registration too', async () => {
    const broke = await registration('broke');
    await sb.updateAccount(accounts.broke!.apiKey, { balance: 0 });
    host = await createTestApp({ platform, module: VerificationModule.forRoot(broke) });
    const started = await call(host.url, 'POST', '/broke/verification/start', {
      phone_number: phoneNumber(),
      method: 'sms',
    });
    expect(started.status).toBe(503);
    expect(host.opsEvents).toEqual([
      {
        name: 'verification.balance_insufficient',
        payload: expect.objectContaining({ registration: 'broke' }),
      },
    ]);
  });
});

describe('named registrations: store and options', () => {
  it("a named registration's Redis keys go under a prefix of its own unless the host gave one", () => {
    expect(registrationStore({ url: 'redis://x' }, 'north')).toEqual({
      url: 'redis://x',
      keyPrefix: 'pv:north:',
    });
    expect(registrationStore({ url: 'redis://x', keyPrefix: 'mine:' }, 'north')).toEqual({
      url: 'redis://x',
      keyPrefix: 'mine:',
    });
    expect(registrationStore({ url: 'redis://x' }, undefined)).toEqual({ url: 'redis://x' });
    expect(registrationStore(undefined, 'north')).toBeUndefined();
  });

  it("@InjectVerificationOptions(name) gives that registration's options, without a name the unnamed one's", async () => {
    @Injectable()
    class BothOptions {
      constructor(
        @InjectVerificationOptions('north') readonly north: ResolvedVerificationOptions,
        @InjectVerificationOptions() readonly main: ResolvedVerificationOptions,
      ) {}
    }
    const { Test } = await import('@nestjs/testing');
    const { EventEmitterModule } = await import('@nestjs/event-emitter');
    const api = { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' };
    const moduleRef = await Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        VerificationModule.forRoot({ api, routes: { prefix: 'main' } }),
        VerificationModule.forRoot({ api, name: 'north', routes: { prefix: 'north' } }),
      ],
      providers: [BothOptions],
    }).compile();
    try {
      const { north, main } = moduleRef.get(BothOptions);
      expect([north.name, north.routes.prefix]).toEqual(['north', 'north']);
      expect([main.name, main.routes.prefix]).toEqual([undefined, 'main']);
    } finally {
      await moduleRef.close();
    }
  });

  it('a factory cannot rename a registration declared at import', async () => {
    const { Test } = await import('@nestjs/testing');
    const { EventEmitterModule } = await import('@nestjs/event-emitter');
    const boot = Test.createTestingModule({
      imports: [
        EventEmitterModule.forRoot(),
        VerificationModule.forRootAsync({
          name: 'north',
          useFactory: () => ({
            name: 'south',
            api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'k', apiSecret: 's' },
          }),
        }),
      ],
    }).compile();
    await expect(boot).rejects.toThrow('option "name" must be given statically');
  });
});
