/**
 * Attack (lane attack-n, on issue 47's thin-cell fix): a network adds at most CELL_SHARE_PER_NETWORK (2)
 * sessions to one figure cell a day, so a farm of 4 networks filling an operator × device cell in one
 * day (test/attacks/figures-thin-cell) fills none. But the share is a day's, and the cell's figures are
 * read over a week: the same farm of 3 networks (6 addresses), proving 2 of its own numbers per network
 * per day on +7 958 (`device: desktop`, reverse flash calls 5 s after each start, 7.5 RUB to the host in
 * all), fills the cell's MIN_CELL_ENDED (30) in 5 days. The cell is then the farm's alone, and every
 * real desktop user on +7 958 is sent first to the method desktop users of the country seldom complete
 * (4 in 40), for as long as the farm keeps 2 proofs a network a day.
 *
 * Expected: a cell is its own only with evidence from enough networks over the window (not a day's
 * share repeated), so the user still gets SMS. Medium (steering: time to verify of an operator's desktop
 * users). Fails on main (d9234d1c).
 */
import { describe, expect, it } from '@jest/globals';
import { FOLLOWED_AFTER_MS } from '../../src/account/figure-evidence.js';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { DeviceHint } from '../../src/core/journey.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { FIRST_METHOD_TTL_MS } from '../../src/verification/first-method.chooser.js';
import { figureGivers } from '../../src/verification/figure-givers.js';
import { DAY_MS } from '../../src/core/clock.js';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, journeyFixture, journeyHost, start } from '../journeys/journey-host.js';

describe.each(ONE_PLATFORM)('a thin operator cell and a farm over a week (%s)', (platform) => {
  const fx = journeyFixture();
  let seq = 0;
  /** A real user's address: each in a network of its own. */
  let users = 0;
  const realIp = (): string => `10.${++users}.7.1`;

  async function counted(
    stats: MethodStats,
    method: string,
    device: DeviceHint,
    phoneNumber: () => string,
    verified: boolean,
    afterMs: number,
    ip?: string,
  ): Promise<void> {
    const now = fx.sb.now();
    const record = {
      requestId: `attack-${platform}-${++seq}`,
      phoneNumber: phoneNumber(),
      method,
      status: 'sent',
      awaitingCode: method !== 'reverse_flash_call',
      createdAt: now - 60_000,
      expiresAt: now + 240_000,
      verifiedAt: null,
      cost: { amount: method === 'sms' ? 3 : 0.25, currency: 'RUB' },
    } as SessionRecord;
    const caller = ip === undefined ? undefined : `ip:${ip}`;
    const { address, network } = ip === undefined ? {} : figureGivers(caller, ip);
    const givers = { ...(address ? { address } : {}), ...(network ? { network } : {}) };
    await stats.tally(record, caller, device, givers);
    await stats.followed({ ...record, createdAt: now - FOLLOWED_AFTER_MS });
    const end: Partial<SessionRecord> = verified
      ? { status: 'verified', delivered: true, verifiedAt: record.createdAt + afterMs }
      : { status: 'expired' };
    await stats.tally({ ...record, ...end }, caller, device, givers);
  }

  it('30 proofs of a 3-network farm over 5 days do not decide the first method of every desktop user on its operator', async () => {
    const host = await journeyHost(fx, platform);
    const stats = host.app.get(MethodStats, { strict: false });
    // The country's real users (+7 915), each from a network of its own: desktop users complete SMS, seldom the reverse call.
    for (let i = 0; i < 40; i++) await counted(stats, 'sms', 'desktop', freshPhone, i < 34, 20_000, realIp());
    for (let i = 0; i < 40; i++)
      await counted(stats, 'reverse_flash_call', 'desktop', freshPhone, i < 4, 30_000, realIp());
    for (let i = 0; i < 40; i++) await counted(stats, 'sms', 'mobile', freshPhone, i < 34, 20_000, realIp());
    for (let i = 0; i < 40; i++)
      await counted(stats, 'reverse_flash_call', 'mobile', freshPhone, i < 28, 10_000, realIp());
    await fx.sb.advance(30_000);
    let n = 0;
    const on958 = (): string => `+7958123${String(++n).padStart(4, '0')}`;
    const control = await start(host, { phone_number: on958(), method: 'auto', device: 'desktop' });
    expect(control.body.method).toBe('sms');

    // The farm: 3 networks, 2 addresses each; each network proves 2 numbers a day, for 5 days.
    for (let day = 0; day < 5; day++) {
      for (let net = 0; net < 3; net++)
        for (let k = 0; k < 2; k++)
          await counted(
            stats,
            'reverse_flash_call',
            'desktop',
            on958,
            true,
            5_000,
            `192.0.${20 + net}.${30 + k}`,
          );
      await fx.sb.advance(DAY_MS);
    }
    // Past the control's choice (it stands FIRST_METHOD_TTL_MS): the next start reads the farm's cell.
    await fx.sb.advance(FIRST_METHOD_TTL_MS);

    const user = await start(host, { phone_number: on958(), method: 'auto', device: 'desktop' });
    expect(user.status).toBe(201);
    expect(user.body.method).toBe('sms');
  });
});
