/**
 * Attack 43: the account's API rate is everyone's, and free starts are metered per caller, but the
 * status reads those free starts buy are not. One address holds a few dozen reverse flash calls
 * (free unless proved, well within its free budget) and polls each at the method's poll interval:
 * every poll is an upstream GET, so one address fills the account's rate and real users' starts
 * meet the API's 429 (and then the shared back-off). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { ONE_PLATFORM } from '../support/verification-app.js';
import { pollingFixture, realStartsBesidePolls } from './api-rate-polls.js';
import { freshIp, protectedHost } from '../protection/protection-host.js';

describe.each(ONE_PLATFORM)("one address's status polls and the account's API rate (%s)", (platform) => {
  const fx = pollingFixture();

  it('one address polling its own free sessions cannot make real users meet the API rate limit', async () => {
    fx.host = await protectedHost(fx.sb, platform);
    const attacker = freshIp();
    const users = await realStartsBesidePolls(fx.sb, fx.host, () => ({ ip: attacker }));
    // Real users are served (or graded), never refused because one address used the account's rate.
    expect(users.filter((status) => status === 429)).toEqual([]);
  });
});
