/**
 * Attack (issue 47's method health; the network of an IPv6 client is its /48): a farm on one IPv6 /48
 * (a tunnel broker or a hosting provider hands a customer one) gives each of 20 accounts a /64 of its
 * own, one subscriber's network for the per-client limits, and proves 20 of its own +7 926 numbers
 * there (a reverse call switched at once to SMS, the code typed: the host pays each SMS) in 10 minutes.
 * Were each /64 a network, its 20 rescues would fill the country's window alone and degrade the reverse
 * call on every quiet +7 prefix (+7 915's users offered the fallback at half its moment).
 *
 * The defence holds on main: the /48 is one network, which adds 2 sessions a week to a health cell (and
 * 10 a day to the figures). Checked: with an IPv6 client's network taken at /64, +7 915's reverse call is
 * degraded (26 500 → 12 917 ms).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { HEALTH_READ_MS } from '../../src/account/method-health.service.js';
import { call, PLATFORMS } from '../support/verification-app.js';
import {
  freshPhone,
  journeyFixture,
  journeyHost,
  sessionIds,
  start,
  status,
  switchMethod,
} from '../journeys/journey-host.js';
import { from, seedFigures, storeOf } from '../journeys/figure-learning.js';

let farmSerial = 8000;
const farmPhone = () =>
  `+7926${String(process.pid % 1000).padStart(3, '0')}${String(++farmSerial).padStart(4, '0')}`;

describe.each(PLATFORMS)('method health: a farm on one IPv6 /48 (%s)', (platform) => {
  const fx = journeyFixture();

  it('20 own numbers proved from 20 /64s of one /48 leave +7 915’s reverse call healthy, at its moment', async () => {
    const host = await journeyHost(fx, platform, storeOf(platform), {}, { trustProxy: true });
    const stats = host.app.get(MethodStats, { strict: false });
    const account = host.app.get(VerificationAccountService, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
    /** A legitimate +7 915 mobile user of `auto`: the first method, its fallback moment, the health it saw. */
    const user = async () => {
      const res = await start(
        host,
        { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
        'probe',
        from('192.0.2.1'),
      );
      expect(res.status).toBe(201);
      const at = fx.sb.now();
      const body = (await status(host, res.body.verification_id, 'probe')).body;
      const health = account
        .methodHealth()
        .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
        .map((h) => `${h.state}@${h.level}`);
      return {
        method: res.body.method,
        afterMs: Date.parse(String(body.fallback_available_at)) - at,
        health,
      };
    };
    await fx.sb.advance(60_000);
    await user();
    await fx.sb.advance(HEALTH_WINDOW_MS + HEALTH_READ_MS);
    const before = await user();
    expect(before).toMatchObject({ method: 'reverse_flash_call', health: ['healthy@country'] });

    // 20 accounts, each on a /64 of its own in 2001:db8:4a7::/48, each proving one own number.
    for (let i = 0; i < 20; i++) {
      const phone = farmPhone();
      const owner = `farm-v6-${i}`;
      const ip = from(`2001:db8:4a7:${(i + 1).toString(16)}::1`);
      const first = await start(
        host,
        { phone_number: phone, method: 'reverse_flash_call', device: 'mobile' },
        owner,
        ip,
      );
      expect(first.status).toBe(201);
      expect((await switchMethod(host, first.body.verification_id, 'sms', owner, ip)).status).toBe(201);
      await fx.sb.advance(30_000);
      const code = String(fx.sb.getSession(sessionIds(fx.sb, phone).at(-1)!)!.code);
      const check = { verification_id: first.body.verification_id, code };
      const proved = await call(host.url, 'POST', '/verification/check', check, { 'x-user': owner, ...ip });
      expect(proved.body.status).toBe('verified');
      await fx.sb.webhooksIdle();
    }
    await fx.sb.advance(HEALTH_READ_MS);
    expect(await user()).toEqual(before);
  }, 120_000);
});
