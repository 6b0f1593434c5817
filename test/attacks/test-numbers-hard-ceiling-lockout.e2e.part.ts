/**
 * Attack (lane attack-44e, the test number's hard ceiling): fix-44d let a starter past the number's day
 * ceiling (10 x `wrongCodesPerNumber.points` = 100 wrong codes) keep being compared within its own
 * reserve (`maxAttempts` = 3 wrong codes of its day), up to a hard ceiling of 2 x the day (200): past it
 * no code of the number is compared, whoever checks. The reserve is per starter, and an anonymous
 * starter is its client network, so a stranger behind a proxy pool (x-forwarded-for, trustProxy) buys
 * the hard ceiling with networks: 10 networks spend the day (10 wrong codes each, within their hourly
 * budget), 34 more spend 3 reserve codes each (one start, three wrong codes). 44 networks, about 75 free
 * starts and 200 wrong codes over five hours, and the reviewer, from a network of their own that never
 * guessed, with the right code, is refused for the rest of the day. Repeated daily, the app-store
 * reviewer is kept out at no cost.
 *
 * Expected: a starter that never guessed is still compared (the hard ceiling bounds strangers' guessing,
 * not the reviewer's first code: e.g. a reserve no stranger's checks spend, or the hard ceiling counted
 * apart from a starter's first codes). Medium (denies a real user of the host: the reviewer).
 * Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';
import type { StoreKind } from '../verified-phone/guard-host.js';

const HOUR = 3_600_000;
const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004461'],
  ['fastify', 'redis', '+79990004462'],
];

describe.each(CASES)('strangers buy the hard ceiling with networks (%s, %s)', (platform, kind, reviewer) => {
  const suite = sandboxSuite();
  const reviewerHost = reviewerHosts(suite);

  it("44 networks' wrong codes refuse the reviewer's right one", async () => {
    const host = await reviewerHost(platform, reviewer, kind, { owner: undefined });
    const from = (ip: string) => ({ 'x-forwarded-for': ip });
    const guess = (ip: string, wrong: number) =>
      host.wrongCodes(wrong, from(ip), (checked) => expect(checked.status).toBeGreaterThanOrEqual(400));

    // The number's day: 10 networks, 10 wrong codes each (each within its hourly budget).
    for (let net = 0; net < 10; net++) await guess(`73.${net}.1.7`, 10);
    // The reserves: 34 more networks, 3 wrong codes each, ten networks an hour.
    for (let net = 10; net < 44; net++) {
      if (net % 10 === 0) await suite.sb.advance(HOUR + 1_000);
      await guess(`73.${net}.1.7`, 3);
    }

    // The reviewer, from their own network, never guessed: the number and code the host gave them.
    const reviewerIp = '198.51.100.46';
    const id = await host.start(from(reviewerIp));
    const checked = await host.check(id, REVIEWER_CODE, from(reviewerIp));
    expect(checked.body).toMatchObject({ verified: true });
  });
});
