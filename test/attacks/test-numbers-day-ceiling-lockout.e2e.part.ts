/**
 * Attack (lane attack-44d): the fix of test-numbers-wrong-code-lockout gave each starter its own
 * wrong-code budget (`wrongCodesPerNumber`, 10 an hour) but added a ceiling per number and day across
 * every caller (TEST_WRONG_CODES_DAY_FACTOR x points = 100). That ceiling is one for everybody and a
 * stranger fills it alone: staying within its own budget (10 wrong codes an hour, 4 starts an hour)
 * for ten hours, one signed-in stranger spends the number's day. For the rest of that day no code of
 * the reviewer's number is compared: the reviewer, another owner on another network, with the right
 * code, is refused. Repeated daily (or with a few accounts in parallel, in one hour), the app-store
 * reviewer or the demo account is kept out, at no cost (test numbers are never billed).
 *
 * Expected: a stranger's wrong codes never decide whether the reviewer's right code is compared (the
 * ceiling bounds guessing without refusing a starter whose own budget is whole, e.g. the day ceiling
 * counted per starter, or the number's session ended instead of every caller refused).
 * Medium (denies a real user of the host: the reviewer). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';
import { as, type StoreKind } from '../verified-phone/guard-host.js';

const HOUR = 3_600_000;
const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004411'],
  ['fastify', 'redis', '+79990004412'],
];

describe.each(CASES)(
  'a stranger and the test number day ceiling (%s, %s store)',
  (platform, storeKind, reviewer) => {
    const suite = sandboxSuite();
    const reviewerHost = reviewerHosts(suite);

    it("a stranger within its own hourly budget spends the reviewer's day", async () => {
      const host = await reviewerHost(platform, reviewer, storeKind);
      // Ten hours, each within mallory's own budget: 4 starts, 10 wrong codes.
      for (let hour = 0; hour < 10; hour++) {
        await host.wrongCodes(10, as('mallory'));
        await suite.sb.advance(HOUR + 1_000);
      }

      // The reviewer, another owner, signs in with the number and code the host gave them.
      const reviewerHeaders = as('apple-review');
      const id = await host.start(reviewerHeaders);
      const checked = await host.check(id, REVIEWER_CODE, reviewerHeaders);
      expect(checked.body).toMatchObject({ verified: true });
    });
  },
);
