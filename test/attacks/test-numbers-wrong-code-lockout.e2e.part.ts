/**
 * Attack (lane attack-44c): reviewer numbers open to every caller (no `testNumbers.owners`: the only
 * choice of a host that verifies before sign-in) take no per-number start limit, "so that a stranger
 * cannot lock the reviewer out". But the number's wrong-code budget (`wrongCodesPerNumber`, 10 an hour
 * by default) is one for everybody: a stranger who knows (or guesses from the app-store listing) the
 * reviewer's number starts it four times within the default per-client limits and enters ten wrong
 * codes. For the rest of the hour no code of that number is compared: the reviewer, with the right
 * code, from another owner, is answered `invalid_code` with no attempt left and the session fails. A
 * stranger repeating that hourly keeps the app-store reviewer (or the demo account) out for good,
 * at no cost (test numbers are never billed).
 *
 * Expected: a stranger's wrong codes do not decide whether the reviewer's right code is compared (the
 * budget per caller as well, or a right code from another caller compared first).
 * Medium (denies a real user of the host: the reviewer). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';
import { as, type StoreKind } from '../verified-phone/guard-host.js';

const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004401'],
  ['fastify', 'redis', '+79990004402'],
];

describe.each(CASES)('a stranger and the reviewer number (%s, %s store)', (platform, storeKind, reviewer) => {
  const suite = sandboxSuite();
  const reviewerHost = reviewerHosts(suite);

  it("ten wrong codes of a stranger do not refuse the reviewer's right code", async () => {
    // The default limits and test-number budgets; the number open to every caller.
    const host = await reviewerHost(platform, reviewer, storeKind);
    // The stranger: 4 sessions (within its 5 starts of a number an hour), 10 wrong codes.
    await host.wrongCodes(10, as('mallory'));

    // A minute later the reviewer signs in with the number and code the host gave them.
    await suite.sb.advance(60_000);
    const id = await host.start(as('apple-review'));
    const checked = await host.check(id, REVIEWER_CODE, as('apple-review'));
    expect(checked.body).toMatchObject({ verified: true });
  });
});
