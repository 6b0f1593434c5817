/**
 * Issue 43, finding 5: a drip that never converts, judged from the first hour of a fresh host's first
 * day (the prior, `limits.pumping.expectedConversion`). Played as the attacker plays it, beside real
 * users who complete as real users do, default options, over real HTTP on the sandbox's clock.
 */
import { describe, expect, it } from '@jest/globals';
import { call, ONE_PLATFORM, type TestApp } from '../support/verification-app.js';
import {
  check,
  freshIp,
  freshPhone,
  protectedHost,
  protectionFixture,
  startFrom,
} from './protection-host.js';
import type { VerificationSandbox } from '../../src/testing/index.js';

const MINUTE = 60_000;
/** Russian mobile operator prefixes the drip goes round, a fresh block (range) each start. */
const PREFIXES = ['900', '901', '902', '903', '904', '905', '906', '908', '909', '910', '911', '912'];
const SMS_RUB = 3;
const CAP_RUB = 1000;

let blockSerial = 0;
/** A number in a block never used before, of the next prefix. */
function dripNumber(): string {
  blockSerial += 1;
  const prefix = PREFIXES[blockSerial % PREFIXES.length]!;
  const block = String((process.pid * 13 + blockSerial * 7) % 1000).padStart(3, '0');
  return `+7${prefix}${block}${String(blockSerial % 10_000).padStart(4, '0')}`;
}

/** A real user: starts an SMS, follows a graded answer, and completes unless it is one of the 15 % who leave. */
async function realUser(sb: VerificationSandbox, host: TestApp, completes: boolean): Promise<boolean> {
  const ip = freshIp();
  const phone = freshPhone();
  let res = await startFrom(host, ip, phone);
  if (res.status === 409 && Array.isArray(res.body.offered_methods))
    res = await startFrom(host, ip, phone, String(res.body.offered_methods[0]));
  if (res.status !== 201 || !completes) return false;
  const session = sb.sessionsFor(phone).at(-1)!;
  if (session.method === 'reverse_flash_call') {
    await sb.call(session.request_id, phone);
    return true;
  }
  return (await check(host, ip, res.body.verification_id, String(session.code))).body.verified === true;
}

describe.each(ONE_PLATFORM)('a drip judged from the first hour (%s)', (platform) => {
  const fx = protectionFixture();

  it('finding 5: 12 SMS an hour into fresh blocks of every prefix, from fresh addresses, beside real users, take ≤ 10 % of the first day’s cap', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const attack: string[] = [];
    let users = 0;
    let verified = 0;
    let completing = 0;
    // The host's first day, in 10-minute ticks: 2 drip starts and 5 real users (6 of 7 complete).
    for (let tick = 0; tick < 144; tick++) {
      for (let i = 0; i < 2; i++) {
        const phone = dripNumber();
        attack.push(phone);
        await startFrom(fx.host, freshIp(), phone);
      }
      for (let i = 0; i < 5; i++, users++) {
        const completes = users % 7 !== 0;
        if (completes) completing += 1;
        if (await realUser(fx.sb, fx.host, completes)) verified += 1;
      }
      await fx.sb.advance(10 * MINUTE);
    }
    const paid = attack.flatMap((phone) => fx.sb.sessionsFor(phone)).filter((s) => s.method === 'sms');
    expect(paid.length * SMS_RUB).toBeLessThanOrEqual(CAP_RUB / 10);
    // Real users still get through (graded to a method charged on proof while the country is flagged).
    expect(verified / completing).toBeGreaterThanOrEqual(0.975);
  }, 180_000);

  it('one address changes nothing for others: a day of its unconverted starts holds it, and a stranger in its country is still served as asked', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const ip = freshIp();
    const answers: number[] = [];
    let users = 0;
    // A day: the address starts 10 SMS an hour (its per-address limit) to numbers that never
    // complete, and retries past it; two real users an hour complete.
    for (let tick = 0; tick < 144; tick++) {
      for (let i = 0; i < 3; i++) answers.push((await startFrom(fx.host, ip, freshPhone())).status);
      if (tick % 3 === 0) {
        users += 1;
        expect(await realUser(fx.sb, fx.host, true)).toBe(true);
      }
      await fx.sb.advance(10 * MINUTE);
    }
    expect(users).toBe(48);
    // The address is held: graded past its per-address limit (10 an hour), every hour.
    expect(answers.filter((a) => a === 201).length).toBeLessThanOrEqual(10 * 24);
    expect(answers.filter((a) => a === 409).length).toBeGreaterThanOrEqual(8 * 24);
    // Nobody else is: a stranger in its country gets the SMS it asked for.
    const stranger = await startFrom(fx.host, freshIp(), freshPhone());
    expect([stranger.status, stranger.body.held, stranger.body.error_code]).toEqual([
      201,
      undefined,
      undefined,
    ]);
    expect(stranger.body.method).toBe('sms');
  }, 180_000);

  it('a graded user always has a way through: a desktop user who cannot dial is offered the bot, and the host’s captcha opens SMS', async () => {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {
        beforeStart: (ctx) =>
          (ctx.request as { headers: Record<string, unknown> }).headers['x-captcha'] === 'solved'
            ? { allow: true, challengePassed: true }
            : undefined,
      },
      { orchestration: { exclude: { desktop: ['reverse_flash_call'] } } },
    );
    // A burst of 25 SMS nobody completes, each from its own address: the country falls short of its prior.
    for (let i = 0; i < 25; i++) await startFrom(fx.host, freshIp(), dripNumber());
    await fx.sb.advance(11 * MINUTE);
    const [ip, phone] = [freshIp(), freshPhone()];
    const desktop = (method: string, headers: Record<string, string> = {}) =>
      call(
        fx.host!.url,
        'POST',
        '/verification/start',
        { phone_number: phone, method, device: 'desktop' },
        {
          'x-forwarded-for': ip,
          ...headers,
        },
      );
    const graded = await desktop('sms');
    expect(graded.status).toBe(409);
    expect(graded.body.offered_methods).toEqual(['msgr2_bot']);
    const bot = await desktop('msgr2_bot');
    expect(bot.status).toBe(201);
    const session = fx.sb.sessionsFor(phone).at(-1)!;
    await fx.sb.share(session.request_id, phone);
    const code = String(fx.sb.sessionsFor(phone).at(-1)!.code);
    expect((await check(fx.host, ip, bot.body.verification_id, code)).body.verified).toBe(true);
    // Another desktop user passes the host's captcha: served the SMS it asked for.
    const other = await call(
      fx.host.url,
      'POST',
      '/verification/start',
      { phone_number: freshPhone(), method: 'sms', device: 'desktop' },
      { 'x-forwarded-for': freshIp(), 'x-captcha': 'solved' },
    );
    expect([other.status, other.body.method]).toEqual([201, 'sms']);
  });
});
