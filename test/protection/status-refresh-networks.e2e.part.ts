/**
 * A network's status refreshes (`STATUS_REFRESHES_PER_NETWORK`): the addresses and owners of one /24
 * share one meter of upstream refreshes (many accounts or addresses of one holder are one giver of the
 * account's API rate), at most a share of it in one second of the clock. A crowd behind one carrier NAT
 * polling at one moment is answered in part as stored; pages that poll on, as the browser client does,
 * learn their outcome in the seconds and windows after.
 */
import { describe, expect, it } from '@jest/globals';
import { STATUS_REFRESHES_PER_NETWORK } from '../../src/protection/status-read-meter.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { freshPhone, protectedHost, startFrom } from './protection-host.js';

const CROWD = 30;

describe.each(ONE_PLATFORM)("a network's status refreshes (%s)", (platform) => {
  // The sandbox's clock stands still but when moved: the meter's seconds and windows fall where told.
  const fx = sandboxSuite({ demoAccount: { balance: 100_000 } });

  /** `CROWD` users of one /24 place their reverse calls; `poll` reads their pages at one moment. */
  async function crowd(signedIn: boolean) {
    fx.host = await protectedHost(
      fx.sb,
      platform,
      {},
      {
        owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'],
      },
    );
    const host = fx.host;
    const users = Array.from({ length: CROWD }, (_, i) => ({
      ip: `203.0.113.${10 + i}`,
      phone: freshPhone(),
      headers: signedIn ? { 'x-user-id': `user-${i}` } : ({} as Record<string, string>),
      id: undefined as unknown,
    }));
    for (const user of users) {
      const r = await startFrom(host, user.ip, user.phone, 'reverse_flash_call', user.headers);
      expect(r.status).toBe(201);
      user.id = r.body.verification_id;
      await fx.sb.call(fx.sb.sessionsFor(user.phone).at(-1)!.request_id, user.phone);
    }
    // Past the poll interval: each page's read refreshes its session upstream.
    await fx.sb.advance(1_500);
    const poll = async (who: typeof users) =>
      (
        await Promise.all(
          who.map((user) =>
            call(host.url, 'GET', `/verification/status/${String(user.id)}`, undefined, {
              'x-forwarded-for': user.ip,
              ...user.headers,
            }),
          ),
        )
      ).map((r) => r.body.status);
    return { users, poll };
  }

  it.each([
    ['signed-in users', true],
    ['anonymous visitors', false],
  ])(
    `%s of one /24 share its ${STATUS_REFRESHES_PER_NETWORK.refreshes} refreshes a window, ${STATUS_REFRESHES_PER_NETWORK.perSecond} in the last second; the rest are answered as stored and learn it on their next polls`,
    async (_, signedIn) => {
      const { refreshes, perSecond } = STATUS_REFRESHES_PER_NETWORK;
      const { users, poll } = await crowd(signedIn);
      // The pages poll on once a second (the sandbox's clock stands still between): at first the last
      // second's share learn it, then never more than it a second nor more than the window's in 3 s.
      let waiting = users;
      const learned: number[] = [];
      for (let second = 0; waiting.length > 0 && second < 12; second++) {
        if (second > 0) await fx.sb.advance(1_000);
        const seen = await poll(waiting);
        learned.push(seen.filter((s) => s === 'verified').length);
        waiting = waiting.filter((_, i) => seen[i] === 'sent');
      }
      expect(learned[0]).toBe(perSecond);
      for (const n of learned) expect(n).toBeLessThanOrEqual(perSecond);
      for (let i = 0; i + 3 <= learned.length; i++)
        expect(learned[i]! + learned[i + 1]! + learned[i + 2]!).toBeLessThanOrEqual(refreshes);
      expect(waiting).toEqual([]);
    },
  );
});
