/**
 * Attack (on 7882bb9, STATUS_REFRESHES_PER_NETWORK counting anonymous callers only): a signed-in owner's
 * status refreshes are metered only by its own meter (STATUS_READS_PER_CALLER: 6 refreshes per 3 s), and
 * nothing keyed by address or network meters them any more. One holder with 6 accounts of the host
 * (whatever the host's sign-up costs: an e-mail address each on most sites), signed in from ONE address,
 * starts 24 free reverse flash calls (4 an account) and polls each at the method's poll interval: 6 x 6
 * refreshes per 3 s = 12 a second from one address, past the account's API rate of 8 a second, so real
 * users' starts meet the API's 429. Before 7882bb9 the address's /24 took at most 12 refreshes per 3 s
 * (4 a second) whoever asked, and the same attack held. It is api-rate-status-polls-network's attack,
 * with accounts instead of addresses, and from one address instead of six.
 *
 * Expected: refreshes from one address (or one /24) stay bounded whatever owners it presents, e.g. a
 * network meter for owners too (with a higher cap, or per-owner-and-network), so real users are served.
 * Severity: Medium (availability: real users' starts refused with upstream_rate_limit; the attacker needs
 * a handful of host accounts, about the cost of 3 anonymous /24s). Fails on 7882bb9 (passes on 7882bb9^).
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { pollingFixture, realStartsBesidePolls } from './api-rate-polls.js';
import { protectedHost } from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)(
  "one address's signed-in status polls and the account's API rate (%s)",
  (platform) => {
    const fx = pollingFixture();

    it('6 accounts signed in from one address polling their own free sessions cannot make real users meet the API rate limit', async () => {
      fx.host = await protectedHost(
        fx.sb,
        platform,
        {},
        {
          // The host's own authenticated user (here its session says which account is signed in).
          owner: (req) => (req as { headers: Record<string, string | undefined> }).headers['x-user-id'],
        },
      );
      // 6 accounts signed in from one address, taking turns.
      const users = await realStartsBesidePolls(fx.sb, fx.host, (i) => ({
        ip: '203.0.113.10',
        headers: { 'x-user-id': `attacker-account-${i % 6}` },
      }));
      // Real users are served (or graded), never refused because one address used the account's rate.
      expect(users.filter((status) => status === 429)).toEqual([]);
    });
  },
);
