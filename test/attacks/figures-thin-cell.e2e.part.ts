/**
 * Attacks 47 (failed on lane-47 and lane attack-n; pass since a cell needs 20 networks): a thin figure
 * cell filled by one farm. The operator × device cell counts once it holds 30 ended sessions; until
 * then the country's figures stand. A farm holding SIM cards on one operator prefix (+7 958) proves 30
 * reverse flash calls to its own numbers, saying `device: desktop`, 5 s after each start, for 7.5 RUB to
 * the host, within every giver's share (3 a caller, 5 an address, 10 a network a day; 2 a network a week
 * in a cell): in one day from 10 addresses in 4 networks, or 2 a network a day from 3 networks (6
 * addresses) over 5 days, the day's share repeated. Were the cell then the farm's alone, every real
 * desktop user on +7 958 would be sent first to the method desktop users of the country seldom complete
 * (4 in 40), for the 7 days the figures are read: a cell is its own only with evidence from enough
 * networks over the window. Medium (steering: time to verify of an operator's desktop users).
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

describe.each(ONE_PLATFORM)('a thin operator cell and a farm (%s)', (platform) => {
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

  /** The farm's 30 proofs: who sends them, and the days they take (a day passes after each). */
  const farms: [string, { ips: string[]; perIp: number }[]][] = [
    [
      'in one day from 10 addresses in 4 networks',
      [{ ips: Array.from({ length: 10 }, (_, i) => `192.0.${20 + (i % 4)}.${30 + i}`), perIp: 3 }],
    ],
    [
      'from 3 networks (2 addresses each) proving 2 a network a day for 5 days',
      Array.from({ length: 5 }, () => ({
        ips: Array.from({ length: 6 }, (_, i) => `192.0.${20 + Math.floor(i / 2)}.${30 + (i % 2)}`),
        perIp: 1,
      })),
    ],
  ];

  it.each(farms)(
    '30 proofs of a farm %s do not decide the first method of every desktop user on its operator',
    async (_, days) => {
      const host = await journeyHost(fx, platform);
      const stats = host.app.get(MethodStats, { strict: false });
      // The country's real users (+7 915), each from a network of its own: desktop users complete SMS, seldom the reverse call.
      for (let i = 0; i < 40; i++)
        await counted(stats, 'sms', 'desktop', freshPhone, i < 34, 20_000, realIp());
      for (let i = 0; i < 40; i++)
        await counted(stats, 'reverse_flash_call', 'desktop', freshPhone, i < 4, 30_000, realIp());
      for (let i = 0; i < 40; i++)
        await counted(stats, 'sms', 'mobile', freshPhone, i < 34, 20_000, realIp());
      for (let i = 0; i < 40; i++)
        await counted(stats, 'reverse_flash_call', 'mobile', freshPhone, i < 28, 10_000, realIp());
      await fx.sb.advance(30_000);
      let n = 0;
      const on958 = (): string => `+7958123${String(++n).padStart(4, '0')}`;
      const control = await start(host, { phone_number: on958(), method: 'auto', device: 'desktop' });
      expect(control.body.method).toBe('sms');

      for (const { ips, perIp } of days) {
        for (const ip of ips)
          for (let k = 0; k < perIp; k++)
            await counted(stats, 'reverse_flash_call', 'desktop', on958, true, 5_000, ip);
        if (days.length > 1) await fx.sb.advance(DAY_MS);
      }
      // Past the control's choice (it stands FIRST_METHOD_TTL_MS): the next start reads the farm's cell.
      await fx.sb.advance(FIRST_METHOD_TTL_MS);

      const user = await start(host, { phone_number: on958(), method: 'auto', device: 'desktop' });
      expect(user.status).toBe(201);
      expect(user.body.method).toBe('sms');
    },
  );
});
