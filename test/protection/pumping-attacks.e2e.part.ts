/**
 * Issue 29: the outside review's attacks on the money protection, written as the attacker plays
 * them: a few SIM cards, a pool of addresses (a fresh one for every start), no captcha, the default
 * options. Over real HTTP against the sandbox, on the sandbox's clock. Each names the finding it
 * reproduces; the figures are what the attacker gets out, not the rule's thresholds.
 */
import { describe, expect, it } from '@jest/globals';
import type { FraudSuspectedEvent } from '../../src/core/verification-events.js';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import { check, freshIp, protectedHost, protectionFixture, startFrom } from './protection-host.js';

const HOUR = 3_600_000;

let rangeSerial = 0;
/** A fresh range of mobile numbers in one operator prefix (+7 926), and its numbers. */
function freshRange(prefix = '926'): { range: string; number: (i: number) => string } {
  rangeSerial += 1;
  const range = `+7${prefix}${String((process.pid * 7 + rangeSerial * 37) % 1000).padStart(3, '0')}`;
  return { range, number: (i) => `${range}${String(i).padStart(4, '0')}` };
}

function fraudEvents(host: TestApp): FraudSuspectedEvent[] {
  return host.opsEvents
    .filter((e) => e.name === 'verification.fraud_suspected')
    .map((e) => e.payload as FraudSuspectedEvent);
}

describe.each(ONE_PLATFORM)('attacks on the money protection (%s)', (platform) => {
  const fx = protectionFixture();
  const sent = (): number => fx.sb.requestCount('POST /v1/verify');

  it('finding 1, repeated numbers: 10 numbers x 15 starts over 10 ranges send a few SMS, not 150, and are reported', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const numbers = Array.from({ length: 10 }, () => freshRange().number(1));
    const before = sent();
    for (let round = 0; round < 15; round++)
      for (const phone of numbers) await startFrom(fx.host, freshIp(), phone);
    expect(sent() - before).toBeLessThanOrEqual(15);
    expect(fraudEvents(fx.host).length).toBeGreaterThan(0);
  });

  it('finding 2, the cap turned against users: starts to numbers that receive nothing give their reservation back when they end, and a real user is served', async () => {
    const apiKey = fx.sb.demoAccount.apiKey;
    // Nobody receives an SMS, nobody places the reverse flash call.
    await fx.sb.updateAccount(apiKey, {
      population: { methods: { sms: { deliveryRate: 0 }, reverse_flash_call: { completionRate: 0 } } },
    });
    try {
      fx.host = await protectedHost(fx.sb, platform, {
        startPerIp: false,
        startPerPhone: false,
        startPerPhoneAndCaller: false,
        resendCooldownMs: false,
        pumping: false,
        // Ten SMS at 3 RUB.
        spendCap: { amount: 30, windowMs: 24 * HOUR },
      });
      const pages: { id: unknown; ip: string }[] = [];
      for (let i = 0; i < 10; i++) {
        // Each page from a network of its own (its /24's refreshes of a second are not the test's).
        const ip = `203.${i}.51.9`;
        const r = await startFrom(fx.host, ip, freshRange('903').number(i));
        expect(r.status).toBe(201);
        pages.push({ id: r.body.verification_id, ip });
      }
      const flash = await startFrom(fx.host, freshIp(), freshRange('903').number(0), 'reverse_flash_call');
      expect(flash.status).toBe(503);
      // The sessions expire undelivered (the host learns it as its pages poll, each from its browser).
      await fx.sb.advance(6 * 60_000);
      for (const { id, ip } of pages) {
        const status = await call(fx.host.url, 'GET', `/verification/status/${String(id)}`, undefined, {
          'x-forwarded-for': ip,
        });
        expect(status.body.status).toBe('expired');
      }
      expect((await startFrom(fx.host, freshIp(), freshRange('903').number(1))).status).toBe(201);
    } finally {
      await fx.sb.updateAccount(apiKey, { population: null });
    }
  });

  it('finding 3, faked conversions: 4 numbers verified 8 times each do not make 150 numbers of their prefix look converting', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const own = freshRange();
    for (let round = 0; round < 8; round++)
      for (let i = 0; i < 4; i++) {
        const ip = freshIp();
        const started = await startFrom(fx.host, ip, own.number(i));
        if (started.status !== 201) continue;
        const code = fx.sb.sessionsFor(own.number(i)).at(-1)!.code!;
        await call(
          fx.host.url,
          'POST',
          '/verification/check',
          { verification_id: started.body.verification_id, code },
          { 'x-forwarded-for': ip },
        );
      }
    const before = sent();
    const pumped = Array.from({ length: 10 }, () => freshRange());
    for (let i = 0; i < 15; i++)
      for (const range of pumped) await startFrom(fx.host, freshIp(), range.number(100 + i));
    expect(sent() - before).toBeLessThanOrEqual(10);
  });

  it('finding 4, slow drip: a day of held attempts does not raise the next day’s baseline; the same attack then sends a few SMS', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const dripRanges = Array.from({ length: 20 }, () => freshRange('925'));
    let n = 0;
    for (let tick = 0; tick < 72; tick++) {
      for (let i = 0; i < 5; i++) {
        n += 1;
        await startFrom(fx.host, freshIp(), dripRanges[n % 20]!.number(n));
      }
      await fx.sb.advance(20 * 60_000);
    }
    await fx.sb.advance(2 * HOUR);
    const before = sent();
    const pumped = Array.from({ length: 10 }, () => freshRange('925'));
    for (let i = 0; i < 15; i++) {
      for (const range of pumped) await startFrom(fx.host, freshIp(), range.number(5000 + i));
      await fx.sb.advance(4 * 60_000);
    }
    expect(sent() - before).toBeLessThanOrEqual(10);
    expect(n).toBe(360);
  }, 180_000);

  it('finding 5, bursts into fresh ranges: 25 simultaneous starts into a range never seen send a few; waves into further ranges of the prefix, across window boundaries, are held too', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const burst = async (): Promise<number> => {
      const range = freshRange('929');
      const before = sent();
      await Promise.all(
        Array.from({ length: 25 }, (_, i) => startFrom(fx.host!, freshIp(), range.number(i))),
      );
      return sent() - before;
    };
    expect(await burst()).toBeLessThanOrEqual(3);
    let total = 0;
    for (let wave = 0; wave < 4; wave++) total += await burst();
    expect(total).toBeLessThanOrEqual(10);
    for (let wave = 0; wave < 3; wave++) {
      await fx.sb.advance(HOUR);
      total += await burst();
    }
    expect(total).toBeLessThanOrEqual(15);
    expect(fraudEvents(fx.host).some((e) => e.reason === 'range_held')).toBe(true);
  });

  /** 12 hours: 5 starts every 20 minutes over 20 ranges of two prefixes, each number and address new. */
  async function slowDrip(address: (n: number) => string): Promise<number> {
    fx.host = await protectedHost(fx.sb, platform);
    const ranges = Array.from({ length: 20 }, (_, r) => freshRange(r % 2 ? '925' : '985'));
    const before = sent();
    let n = 0;
    for (let tick = 0; tick < 36; tick++) {
      for (let i = 0; i < 5; i++, n++) await startFrom(fx.host!, address(n), ranges[n % 20]!.number(n));
      await fx.sb.advance(20 * 60_000);
    }
    return sent() - before;
  }

  it('a slow drip: 15 starts an hour spread over 20 ranges of two prefixes, under every window minimum, is held within the day', async () => {
    // A botnet: every address in a network of its own.
    expect(await slowDrip((n) => `100.${64 + (n >> 8)}.${n & 255}.9`)).toBeLessThanOrEqual(30);
    const host = fx.host!;
    expect(fraudEvents(host).some((e) => e.rule === 'slow_drip' || e.countryUnderAttack)).toBe(true);
    // While the country is under attack, a stranger in a prefix that converts is served by a method
    // charged on proof (free unless it proves its number): offered one, and started with it.
    const user = { ip: freshIp(), phone: freshRange('916').number(1) };
    const first = await startFrom(host, user.ip, user.phone);
    expect(first.status).toBe(409);
    expect(first.body.offered_methods).toContain('reverse_flash_call');
    expect((await startFrom(host, user.ip, user.phone, 'reverse_flash_call')).status).toBe(201);
  }, 60_000);

  it('the same drip from 180 addresses of one /24 is held as that network’s, and changes nothing for a stranger elsewhere', async () => {
    expect(await slowDrip((n) => `203.0.113.${n + 1}`)).toBeLessThanOrEqual(30);
    // One network adds at most its share to its country and prefixes (giver-shares.ts): never "under attack".
    expect(fraudEvents(fx.host!).filter((e) => e.rule === 'slow_drip' || e.countryUnderAttack)).toEqual([]);
    const stranger = await startFrom(fx.host!, freshIp(), freshRange('985').number(1));
    expect([stranger.status, stranger.body.method]).toEqual([201, 'sms']);
    // The network's next start, from a new address, is graded.
    const next = await startFrom(fx.host!, '203.0.113.250', freshRange('925').number(2));
    expect(next.status).toBe(409);
    expect(next.body.offered_methods).toContain('reverse_flash_call');
  }, 60_000);

  it('free evidence: a botnet hammering a held range sends a few SMS, and its refused attempts put the country under attack for nobody', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const pumped = freshRange('926');
    const before = sent();
    // 60 attempts, every address in a network of its own: refusals cost the attacker nothing.
    for (let n = 0; n < 60; n++)
      await startFrom(fx.host, `100.${80 + (n >> 8)}.${n & 255}.9`, pumped.number(n));
    expect(sent() - before).toBeLessThanOrEqual(3);
    expect(fraudEvents(fx.host).some((e) => e.subject === 'range')).toBe(true);
    // What went ahead is the country's evidence, not what was refused: a stranger elsewhere gets SMS.
    expect(fraudEvents(fx.host).filter((e) => e.countryUnderAttack)).toEqual([]);
    const stranger = await startFrom(fx.host, freshIp(), freshRange('985').number(1));
    expect([stranger.status, stranger.body.method]).toEqual([201, 'sms']);
    // The range's refusals still weigh where they were made: past its hold, it is held again.
    await fx.sb.advance(HOUR);
    const again = await startFrom(fx.host, '100.90.0.9', pumped.number(99));
    expect(again.status).toBe(409);
  });

  it('laundering by free proofs: SMS into 60 numbers spread over 30 prefixes, each number then proved by its own reverse flash call, are judged as unconverted', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const bot = (n: number) => `100.${96 + (n >> 8)}.${n & 255}.9`;
    const numbers = Array.from({ length: 60 }, (_, i) => freshRange(String(900 + (i % 30))).number(i));
    for (const [i, phone] of numbers.entries()) {
      await startFrom(fx.host, bot(2 * i), phone);
      await fx.sb.advance(61_000);
      // The pumper holds the number: its call costs it nothing, and the host pays for the proof.
      const proof = await startFrom(fx.host, bot(2 * i + 1), phone, 'reverse_flash_call');
      if (proof.status !== 201) continue;
      await fx.sb.call(fx.sb.sessionsFor(phone)[0]!.request_id, phone);
      await fx.sb.advance(5_000);
      const id = String(proof.body.verification_id);
      const seen = await call(fx.host.url, 'GET', `/verification/status/${id}`, undefined, {
        'x-forwarded-for': bot(2 * i + 1),
      });
      expect(seen.body.status).toBe('verified');
    }
    const sms = numbers.flatMap((phone) => fx.sb.sessionsFor(phone)).filter((x) => x.method === 'sms');
    expect(sms.length).toBeLessThanOrEqual(30);
    expect(fraudEvents(fx.host).some((e) => e.countryUnderAttack)).toBe(true);
  }, 60_000);

  it('an owner farm: numbers verified in one range do not vouch for their prefix; a spread over its other ranges is held there', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const farm = freshRange();
    for (let i = 0; i < 10; i++) {
      const ip = freshIp();
      const started = await startFrom(fx.host, ip, farm.number(i));
      const code = fx.sb.sessionsFor(farm.number(i)).at(-1)!.code!;
      await check(fx.host, ip, started.body.verification_id, code);
    }
    const before = sent();
    const pumped = Array.from({ length: 10 }, () => freshRange());
    for (let i = 0; i < 60; i++) await startFrom(fx.host, freshIp(), pumped[i % 10]!.number(100 + i));
    expect(sent() - before).toBeLessThanOrEqual(12);
    expect(fraudEvents(fx.host).some((e) => e.subject === 'prefix' && e.prefix === '+7926')).toBe(true);
  });
});
