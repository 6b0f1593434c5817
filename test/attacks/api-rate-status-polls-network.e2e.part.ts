/**
 * Attack (lane attack-n, on attack 43's fix): the status route's upstream reads are metered per caller
 * (STATUS_READS_PER_CALLER: 6 refreshes per 3 s), the caller an anonymous visitor's address. Free
 * starts are bounded per address AND per network (`freeStartPerCaller`, 120 per 10 minutes: a /24 is one
 * holder of many addresses), but the read meter is not: one holder of 6 addresses in one /24 starts 24
 * reverse flash calls (4 an address, far within its network's free budget, free for the host) and polls
 * each at the method's poll interval. Each address stays within its own meter (2 reads a second), the 6
 * together make 12: past the account's API rate of 8 a second, and real users' starts meet the API's
 * 429. Attack 43's shape, from one /24 instead of one address.
 *
 * Expected: a network's reads are bounded as its free starts are (a meter per network beside the
 * caller's), so real users are served. Medium (availability: real users refused). Fails on main
 * (d9234d1c).
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { pollingFixture, realStartsBesidePolls } from './api-rate-polls.js';
import { protectedHost } from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)("one network's status polls and the account's API rate (%s)", (platform) => {
  const fx = pollingFixture();

  it('6 addresses of one /24 polling their own free sessions cannot make real users meet the API rate limit', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    // One holder: 6 addresses of one /24, taking turns.
    const users = await realStartsBesidePolls(fx.sb, fx.host, (i) => ({ ip: `203.0.113.${10 + (i % 6)}` }));
    // Real users are served (or graded), never refused because one address used the account's rate.
    expect(users.filter((status) => status === 429)).toEqual([]);
  });
});
