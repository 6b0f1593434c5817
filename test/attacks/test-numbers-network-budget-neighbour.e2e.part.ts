/**
 * Attack (lane attack-44e, the reserve and budgets of a signed-in reviewer's network): fix-44d keyed a
 * test session's wrong-code budgets by its starter (`wrongCodesPerNumber`, 10 an hour, per owner) "so a
 * stranger's wrong codes never spend the reviewer's", but a signed-in starter's session also takes its
 * client network's budget (3 x points = 30 an hour, per IPv4 /24). Three strangers' accounts (free sign-
 * ups) behind the reviewer's network (the same carrier CGNAT /24, the same office, or an x-forwarded-for
 * the host trusts) each spend their own 10 wrong codes of the number: 30, the network's hour. The
 * reviewer, signed in as their own owner, never guessed, sends the right code: refused (`invalid_code`,
 * as a wrong one), for the rest of the hour; repeated hourly, kept out.
 *
 * Expected: a starter whose own budget is whole is compared (the network's budget bounds guessing
 * without refusing a starter that never guessed, e.g. a network budget that refuses only its spenders,
 * or the owner's own first codes taken apart from it). Low (needs the reviewer's /24; denies the
 * reviewer). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { PLATFORMS, type Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';

describe.each(PLATFORMS)("strangers on the reviewer's network (%s)", (platform: Platform) => {
  const suite = sandboxSuite();
  const reviewerHost = reviewerHosts(suite);

  it("three accounts' wrong codes refuse the signed-in reviewer's right one", async () => {
    const reviewer = platform === 'express' ? '+79990004481' : '+79990004482';
    const host = await reviewerHost(platform, reviewer, 'memory');
    const as = (user: string, ip: string) => ({ 'x-user': user, 'x-forwarded-for': ip });

    // Three strangers' accounts, each from its own address of the reviewer's /24: 10 wrong codes each.
    for (let n = 0; n < 3; n++) await host.wrongCodes(10, as(`mallory-${n}`, `198.51.100.${77 + n}`));

    // The reviewer, signed in, from their own address of that network, with the right code.
    const headers = as('apple-review', '198.51.100.20');
    const id = await host.start(headers);
    const checked = await host.check(id, REVIEWER_CODE, headers);
    expect(checked.body).toMatchObject({ verified: true });
  });
});
