import { describe, expect, it } from '@jest/globals';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { EventEmitter2 } from '@nestjs/event-emitter';
import type { SpendCapReachedEvent } from '../../src/core/verification-events.js';
import { resolveVerificationOptions } from '../../src/options/verification.options.js';
import { CapturingLogger } from '../support/log-capture.js';
import { eventually } from '../support/redis-server.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import {
  freshIp,
  freshPhone,
  protectedHost,
  refusal,
  retryAfterRange,
  startFrom,
  timed,
  protectionFixture,
} from './protection-host.js';

const DAY = 86_400_000;

/** Only the spend cap: the other limits would get in the way of many starts. */
const capOnly = (amount: number, windowMs = DAY) => ({
  startPerIp: false as const,
  startPerPhone: false as const,
  startPerPhoneAndCaller: false as const,
  resendCooldownMs: false as const,
  // Fresh numbers from one range that never convert are what pumping defence holds; which of the two
  // refuses a concurrent start first depends on the interleaving, so the cap is tested alone.
  pumping: false as const,
  spendCap: { amount, windowMs },
});

describe.each(ONE_PLATFORM)('spend cap (%s)', (platform) => {
  const fx = protectionFixture();

  const capEvents = () =>
    fx
      .host!.opsEvents.filter((e) => e.name === 'verification.spend_cap_reached')
      .map((e) => e.payload as SpendCapReachedEvent);

  it('at its exact boundary: 3 sms of 3.00 fit 10.00, the 4th is 503 spend_cap, a 0.80 flash call still fits; one event per window; the next window opens', async () => {
    fx.host = await protectedHost(fx.sb, platform, capOnly(10));
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    const posts = fx.sb.requestCount('POST /v1/verify');
    const windowEnd = (Math.floor(fx.sb.now() / DAY) + 1) * DAY;

    const [refused, sentAt, receivedAt] = await timed(fx.sb, () =>
      startFrom(fx.host!, freshIp(), freshPhone()),
    );
    expect(refusal(refused)).toMatchObject({
      status: 503,
      errorCode: 'service_unavailable',
      reason: 'spend_cap',
    });
    expect(retryAfterRange(windowEnd, windowEnd, sentAt, receivedAt)).toContain(
      Number(refused.headers.get('retry-after')),
    );
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts);
    expect(capEvents()).toEqual([
      {
        event: 'verification.spend_cap_reached',
        spent: 9,
        cap: 10,
        currency: 'RUB',
        windowMs: DAY,
        windowEndsAt: new Date(windowEnd),
      },
    ]);

    expect((await startFrom(fx.host, freshIp(), freshPhone(), 'flash_call')).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone(), 'flash_call')).reason).toBe('spend_cap');
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
    expect(capEvents()).toHaveLength(1);
    expect(fx.sb.requestCount('POST /v1/verify')).toBe(posts + 1);

    await fx.sb.advance(windowEnd - fx.sb.now());
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
    expect(capEvents()).toHaveLength(2);
    expect(capEvents()[1]).toMatchObject({ spent: 9, windowEndsAt: new Date(windowEnd + DAY) });
  });

  it("a host's alert listener that throws at once (on the emitter, as `emitter.on` registers it) changes no answer: the start the cap refuses is 503 spend_cap, the next too", async () => {
    const heard: string[] = [];
    @Injectable()
    class FailingPager implements OnModuleInit {
      constructor(private readonly emitter: EventEmitter2) {}
      onModuleInit(): void {
        this.emitter.on('verification.spend_cap_reached', (event: SpendCapReachedEvent) => {
          heard.push(event.event);
          throw new Error('pager down');
        });
      }
    }
    fx.host = await protectedHost(fx.sb, platform, capOnly(4), {}, { providers: [FailingPager] });
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    for (let i = 0; i < 2; i++)
      expect(refusal(await startFrom(fx.host, freshIp(), freshPhone()))).toMatchObject({
        status: 503,
        reason: 'spend_cap',
      });
    expect(heard).toEqual(['verification.spend_cap_reached']);
  });

  it('a reverse flash call is counted when it is proved: 1.00 admits any number of them unproved, and 4 proved of 0.25 fill it', async () => {
    fx.host = await protectedHost(fx.sb, platform, capOnly(1));
    const proved: string[] = [];
    const prove = async (): Promise<number> => {
      const [ip, phone] = [freshIp(), freshPhone()];
      const res = await startFrom(fx.host!, ip, phone, 'reverse_flash_call');
      if (res.status !== 201) return res.status;
      const [session] = fx.sb.sessionsFor(phone);
      await fx.sb.call(session!.request_id, phone);
      const seen = await call(
        fx.host!.url,
        'GET',
        `/verification/status/${String(res.body.verification_id)}`,
      );
      proved.push(String(seen.body.status));
      return res.status;
    };
    // Unproved, they reserve nothing: 8 of them (2.00) are admitted against 1.00.
    for (let i = 0; i < 8; i++)
      expect((await startFrom(fx.host, freshIp(), freshPhone(), 'reverse_flash_call')).status).toBe(201);
    for (let i = 0; i < 4; i++) expect(await prove()).toBe(201);
    expect(proved).toEqual(['verified', 'verified', 'verified', 'verified']);
    // The session's end is settled after its status answered: the 4 proofs (1.00) fill the cap.
    await eventually(async () => {
      expect(refusal(await startFrom(fx.host!, freshIp(), freshPhone(), 'reverse_flash_call'))).toMatchObject(
        {
          status: 503,
          reason: 'spend_cap',
        },
      );
    }, 2000);
  });

  it('a start the cap refuses keeps nothing of the other limits: the same address and number start at once with a method that fits', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      ...capOnly(2),
      startPerIp: { points: 2, windowMs: 3_600_000 },
      startPerPhone: { points: 1, windowMs: 3_600_000 },
      resendCooldownMs: 60_000,
    });
    const [ip, phone] = [freshIp(), freshPhone()];
    // An SMS (3.00) never fits 2.00: each is refused by the cap, and gives back the address's and the
    // number's counts and the cooldown it took on the way.
    for (let i = 0; i < 3; i++) expect(refusal(await startFrom(fx.host, ip, phone)).reason).toBe('spend_cap');
    expect((await startFrom(fx.host, ip, phone, 'flash_call')).status).toBe(201);
  });

  it('utcOffsetMinutes: 180 makes the daily window a Moscow day: it ends at 21:00 UTC', async () => {
    fx.host = await protectedHost(fx.sb, platform, {
      ...capOnly(10),
      spendCap: { amount: 10, windowMs: DAY, utcOffsetMinutes: 180 },
    });
    const offset = 3 * 3_600_000;
    const windowEnd = (Math.floor((fx.sb.now() + offset) / DAY) + 1) * DAY - offset;
    expect(new Date(windowEnd).toISOString()).toMatch(/T21:00:00\.000Z$/);
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    const [refused, sentAt, receivedAt] = await timed(fx.sb, () =>
      startFrom(fx.host!, freshIp(), freshPhone()),
    );
    expect(refusal(refused).reason).toBe('spend_cap');
    expect(retryAfterRange(windowEnd, windowEnd, sentAt, receivedAt)).toContain(
      Number(refused.headers.get('retry-after')),
    );
    expect(capEvents()).toMatchObject([{ spent: 9, windowEndsAt: new Date(windowEnd) }]);

    // A second before the Moscow midnight (this sandbox clock also runs in real time) it still holds.
    await fx.sb.advance(windowEnd - 1000 - fx.sb.now());
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
    await fx.sb.advance(Math.max(windowEnd - fx.sb.now(), 0));
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
    expect(capEvents()).toHaveLength(2);
    expect(capEvents()[1]).toMatchObject({ windowEndsAt: new Date(windowEnd + DAY) });
  });

  it('concurrent starts cannot overshoot it: 12 at once against 9.00 make exactly 3 initiations', async () => {
    fx.host = await protectedHost(fx.sb, platform, capOnly(9));
    const posts = fx.sb.requestCount('POST /v1/verify');
    const responses = await Promise.all(
      Array.from({ length: 12 }, () => startFrom(fx.host!, freshIp(), freshPhone())),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(3);
    expect(responses.filter((r) => r.body.reason === 'spend_cap')).toHaveLength(9);
    expect(fx.sb.requestCount('POST /v1/verify') - posts).toBe(3);
    expect(capEvents()).toHaveLength(1);
  });

  it('estimates come from GET /v1/prices, read once and cached', async () => {
    fx.host = await protectedHost(fx.sb, platform, capOnly(1000));
    const reads = fx.sb.requestCount('GET /v1/prices');
    for (let i = 0; i < 5; i++) await startFrom(fx.host, freshIp(), freshPhone());
    expect(fx.sb.requestCount('GET /v1/prices') - reads).toBe(1);
  });

  it('counts the real cost: with the price list unavailable, the cost the API returns is what is counted', async () => {
    fx.sb.addFault({ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 });
    fx.host = await protectedHost(fx.sb, platform, capOnly(9));
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
    expect(capEvents()).toMatchObject([{ spent: 9 }]);
  });

  it('a start the API refused (nothing sent) gives its reservation back', async () => {
    fx.host = await protectedHost(fx.sb, platform, capOnly(9));
    fx.sb.addFault({ route: 'POST /v1/verify', kind: 'status', status: 500, count: 2 });
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(503);
    expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(503);
    for (let i = 0; i < 3; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(refusal(await startFrom(fx.host, freshIp(), freshPhone())).reason).toBe('spend_cap');
  });

  it('with the price list unavailable, 60 concurrent sms starts against 9.00 make exactly 3 initiations (the worst-case price is reserved)', async () => {
    fx.sb.addFault({ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 });
    fx.host = await protectedHost(fx.sb, platform, { ...capOnly(9), startPerPhone: false });
    const posts = fx.sb.requestCount('POST /v1/verify');
    const responses = await Promise.all(
      Array.from({ length: 60 }, () => startFrom(fx.host!, freshIp(), freshPhone())),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(3);
    expect(responses.filter((r) => r.body.reason === 'spend_cap')).toHaveLength(57);
    expect(fx.sb.requestCount('POST /v1/verify') - posts).toBe(3);
  });

  it('worstCasePrice is the host setting: 4.50 reserved per unknown price lets 2 of 10 concurrent starts through a 9.00 cap', async () => {
    fx.sb.addFault({ route: 'GET /v1/prices', kind: 'status', status: 500, count: 0 });
    fx.host = await protectedHost(fx.sb, platform, {
      ...capOnly(9),
      spendCap: { amount: 9, windowMs: DAY, worstCasePrice: 4.5 },
    });
    const posts = fx.sb.requestCount('POST /v1/verify');
    const responses = await Promise.all(
      Array.from({ length: 10 }, () => startFrom(fx.host!, freshIp(), freshPhone())),
    );
    expect(responses.filter((r) => r.status === 201)).toHaveLength(2);
    expect(fx.sb.requestCount('POST /v1/verify') - posts).toBe(2);
  });

  it('on by default: 1,000 RUB a UTC day (at 400 RUB an sms, the third start is graded: a method charged on proof is offered)', async () => {
    await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, { prices: { sms: 400 } });
    try {
      fx.host = await protectedHost(fx.sb, platform, {
        startPerIp: false,
        startPerPhone: false,
        resendCooldownMs: false,
      });
      for (let i = 0; i < 2; i++)
        expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
      const third = await startFrom(fx.host, freshIp(), freshPhone());
      expect(third.body).toMatchObject({ error_code: 'method_held', held: 'spend_cap' });
      expect(capEvents()).toMatchObject([{ spent: 800, cap: 1000, currency: 'RUB', windowMs: DAY }]);
    } finally {
      await fx.sb.updateAccount(fx.sb.demoAccount.apiKey, { prices: { sms: 3 } });
    }
  });

  it('spendCap: false switches it off: no cap, and (with methods given) the price list is never read', async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      { startPerIp: false, resendCooldownMs: false, spendCap: false },
      { methods: ['sms'] },
    );
    const reads = fx.sb.requestCount('GET /v1/prices');
    for (let i = 0; i < 5; i++) expect((await startFrom(fx.host, freshIp(), freshPhone())).status).toBe(201);
    expect(fx.sb.requestCount('GET /v1/prices')).toBe(reads);
  });

  it('warns at boot under NODE_ENV=production when nothing bounds spending (no spend cap, no beforeStart)', async () => {
    const nodeEnv = process.env.NODE_ENV;
    process.env.NODE_ENV = 'production';
    const warningsWith = async (limits: Parameters<typeof protectedHost>[2]): Promise<string[]> => {
      const logger = new CapturingLogger();
      const host = await protectedHost(fx.sb, platform, limits, {}, { logger });
      await host.close();
      return logger.lines.filter((l) => l.startsWith('warn') && l.includes('limits.spendCap is off'));
    };
    try {
      expect(await warningsWith({ spendCap: false })).toHaveLength(1);
      expect(await warningsWith({ enabled: false })).toHaveLength(1);
      expect(await warningsWith({})).toEqual([]);
      expect(await warningsWith({ spendCap: false, beforeStart: () => true })).toEqual([]);
      process.env.NODE_ENV = 'development';
      expect(await warningsWith({ spendCap: false })).toEqual([]);
    } finally {
      process.env.NODE_ENV = nodeEnv;
    }
  });
});

describe('spend cap options', () => {
  it.each([[1.5], [-721], [841], ['180']])(
    'utcOffsetMinutes %j is refused at boot, naming the key',
    (bad) => {
      expect(() =>
        resolveVerificationOptions({
          api: { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' },
          limits: { spendCap: { amount: 10, windowMs: DAY, utcOffsetMinutes: bad as number } },
        }),
      ).toThrow(
        expect.objectContaining({
          name: 'VerificationOptionsError',
          field: 'limits.spendCap.utcOffsetMinutes',
        }) as unknown as Error,
      );
    },
  );

  it('defaults to 1,000 RUB a UTC day reserving 3 RUB for an unknown price; false turns it off; enabled: false too', () => {
    const resolveLimits = (limits: Parameters<typeof resolveVerificationOptions>[0]['limits']) =>
      resolveVerificationOptions({
        api: { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' },
        limits,
      }).limits.spendCap;
    expect(resolveLimits(undefined)).toEqual({
      amount: 1000,
      windowMs: DAY,
      currency: 'RUB',
      utcOffsetMinutes: 0,
      worstCasePrice: 3,
    });
    expect(resolveLimits({ spendCap: false })).toBe(false);
    expect(resolveLimits({ enabled: false })).toBe(false);
    expect(resolveLimits({ spendCap: { amount: 50, windowMs: DAY, worstCasePrice: 7.5 } })).toMatchObject({
      amount: 50,
      worstCasePrice: 7.5,
    });
  });

  it.each([[0], [-1], ['3'], [Number.NaN]])('worstCasePrice %j is refused at boot, naming the key', (bad) => {
    expect(() =>
      resolveVerificationOptions({
        api: { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' },
        limits: { spendCap: { amount: 10, windowMs: DAY, worstCasePrice: bad as number } },
      }),
    ).toThrow(
      expect.objectContaining({
        name: 'VerificationOptionsError',
        field: 'limits.spendCap.worstCasePrice',
      }) as unknown as Error,
    );
  });

  it('defaults to UTC days and keeps a valid offset', () => {
    const resolveCap = (utcOffsetMinutes?: number) =>
      resolveVerificationOptions({
        api: { baseUrl: 'http://127.0.0.1:1', apiKey: 'k', apiSecret: 's' },
        limits: { spendCap: { amount: 10, windowMs: DAY, utcOffsetMinutes } },
      }).limits.spendCap;
    expect(resolveCap()).toMatchObject({ utcOffsetMinutes: 0 });
    expect(resolveCap(-300)).toMatchObject({ utcOffsetMinutes: -300 });
  });
});
