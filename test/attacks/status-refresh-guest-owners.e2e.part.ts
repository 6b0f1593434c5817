/**
 * Attack (on 7882bb9, STATUS_REFRESHES_PER_NETWORK counting anonymous callers only): the network meter
 * now trusts ANY owner the host's `owner(req)` returns as "the host's identity", and skips it. Hosts with
 * guest checkouts commonly give a visitor a guest id in a cookie they mint on first visit (a guest
 * cart, an express-session id) and pass it as the owner, so that the handle is bound to the visitor. A
 * caller mints such an id for free by dropping its cookie. ONE address with a fresh guest cookie per
 * session starts 24 free reverse flash calls and polls each at its poll interval: every guest is within
 * its own meter (one refresh per 1.5 s), the address and its /24 are not metered at all, 16 refreshes a
 * second go upstream, past the account's API rate of 8, and real users' starts meet the API's 429. The
 * same polls with no owner (same address) are held by the /24's 12 per 3 s; before 7882bb9 these were
 * too.
 *
 * Expected: refreshes from one address (or /24) stay bounded whatever owners it presents; or the docs'
 * `owner` contract says an owner must be an account the caller cannot mint for free. Severity: Medium
 * where a host keys guests as owners (zero cost for the attacker); otherwise see
 * status-refresh-owners-one-address. Fails on 7882bb9 (passes on 7882bb9^).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { pollingFixture, realStartsBesidePolls } from './api-rate-polls.js';
import { protectedHost } from '../protection/protection-host.js';

/** The host's owner: its signed-in user, else the guest id of the visitor's `guest` cookie. */
function guestOwner(req: unknown): string | undefined {
  const cookie = (req as { headers: Record<string, string | undefined> }).headers.cookie ?? '';
  return /(?:^|;\s*)guest=([^;]+)/.exec(cookie)?.[1];
}

describe.each(ONE_PLATFORM)(
  "guest-keyed owners' status polls and the account's API rate (%s)",
  (platform) => {
    const fx = pollingFixture();

    it('one address minting a guest id per session cannot make real users meet the API rate limit', async () => {
      fx.host = await protectedHost(fx.sb, platform, {}, { owner: guestOwner });
      // One address, a guest id of its own for each session.
      const users = await realStartsBesidePolls(fx.sb, fx.host, () => ({
        ip: '203.0.113.10',
        headers: { cookie: `guest=${randomUUID()}` },
      }));
      expect(users.filter((status) => status === 429)).toEqual([]);
    });
  },
);
