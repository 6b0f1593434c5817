/**
 * A network's status refreshes (`STATUS_REFRESHES_PER_NETWORK`): the addresses and owners of one /24
 * share one meter of upstream refreshes (many accounts or addresses of one holder are one giver of the
 * account's API rate). A crowd behind one carrier NAT polling at one moment is answered in part as
 * stored; pages that poll on, as the browser client does, learn their outcome in the windows after.
 */
import { describe, expect, it } from '@jest/globals';
import { STATUS_REFRESHES_PER_NETWORK } from '../../src/protection/status-read-meter.js';
import { call, ONE_PLATFORM } from '../support/verification-app.js';
import { freshPhone, protectedHost, protectionFixture, startFrom } from './protection-host.js';

const CROWD = 30;

describe.each(ONE_PLATFORM)("a network's status refreshes (%s)", (platform) => {
  const fx = protectionFixture();

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
    `%s of one /24 share its ${STATUS_REFRESHES_PER_NETWORK.refreshes} refreshes a window; the rest are answered as stored and learn it on their next polls`,
    async (_, signedIn) => {
      const { refreshes, windowMs } = STATUS_REFRESHES_PER_NETWORK;
      const { users, poll } = await crowd(signedIn);
      const seen = await poll(users);
      expect(seen.filter((s) => s === 'verified')).toHaveLength(refreshes);
      expect(seen.filter((s) => s === 'sent')).toHaveLength(CROWD - refreshes);
      let waiting = users.filter((_, i) => seen[i] === 'sent');
      // Within the network's window nothing more is refreshed (this host's clock runs: the window's exact
      // bound is the meter's unit spec's).
      await fx.sb.advance(windowMs - 1_000);
      expect(await poll(waiting)).toEqual(Array(waiting.length).fill('sent'));
      // Each window after, its count of the pages still polling learn it.
      for (const expected of [refreshes, CROWD - 2 * refreshes]) {
        await fx.sb.advance(windowMs);
        const again = await poll(waiting);
        expect(again.filter((s) => s === 'verified')).toHaveLength(expected);
        waiting = waiting.filter((_, i) => again[i] === 'sent');
      }
      expect(waiting).toEqual([]);
    },
  );
});
