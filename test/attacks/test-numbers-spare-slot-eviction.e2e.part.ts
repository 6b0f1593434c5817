/**
 * Attack (lane attack-44d, re-attack of the spare slots per number): a test number keeps 10 sessions an
 * hour across every network (KEPT_TEST_SESSIONS_PER_NUMBER_HOUR); every further start of the number,
 * whoever makes it, takes the next of the number's 5 spare slots (SPARE_TEST_SESSION_SLOTS), each in
 * the place of the oldest, and a session whose slot a newer one took is gone (404). A stranger who
 * knows the reviewer's number fills the number's hour with 10 anonymous starts (one from each of 10
 * networks, within every per-client limit), so the reviewer's next start lands in a spare slot; five
 * more starts from five more networks take every spare slot in turn, and the reviewer's session, its
 * right code in hand, is answered not found. A stranger starting the number from a proxy pool a few
 * times a minute keeps every reviewer session alive for seconds only, at no cost (never billed).
 *
 * Expected: a stranger's test starts never end another caller's test session (the spare slots per
 * network/caller, not per number, or the number's kept sessions per caller).
 * Medium (denies a real user of the host: the reviewer). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';
import type { StoreKind } from '../verified-phone/guard-host.js';

const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004421'],
  ['fastify', 'redis', '+79990004422'],
];

describe.each(CASES)(
  'strangers and a reviewer session in a spare slot (%s, %s)',
  (platform, kind, reviewer) => {
    const suite = sandboxSuite();
    const reviewerHost = reviewerHosts(suite);

    it("fifteen strangers' starts of the number end the reviewer's session", async () => {
      const host = await reviewerHost(platform, reviewer, kind, { owner: undefined });
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      const start = (ip: string) => host.start(from(ip));

      // The stranger fills the number's hour: one start from each of 10 networks.
      for (let net = 0; net < 10; net++) await start(`71.${net}.1.7`);
      // The reviewer, from their own network, starts the number the host gave them.
      const reviewerIp = '198.51.100.20';
      const id = await start(reviewerIp);
      // Five more starts of the stranger, from five more networks.
      for (let net = 10; net < 15; net++) await start(`71.${net}.1.7`);

      const checked = await host.check(id, REVIEWER_CODE, from(reviewerIp));
      expect(checked.body).toMatchObject({ verified: true });
    });
  },
);
