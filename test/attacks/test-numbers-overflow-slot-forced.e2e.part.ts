/**
 * Attack (lane attack-44e, the overflow slot of the number's spare pool): a stranger who knows the
 * reviewer's number fills the number's hour (10 kept sessions, one start from each of 10 networks), then
 * all five of the number's spare slots (5 more starts, each from its own network: every slot is then
 * held by a pending session of another starter). The reviewer's own start then finds no free slot and no
 * own session, so it lands in the overflow slot; one more anonymous start from a network never seen
 * before also has no own session, so it takes the overflow slot too, in the reviewer's place, and the
 * reviewer's check, right code in hand, is answered not found. 17 free starts, within every per-client
 * limit, end the reviewer's session; repeated every few seconds from a proxy pool they keep the
 * reviewer out for the hour.
 *
 * Expected: a session another starter holds is never replaced by a stranger (a start finding every slot
 * held by others is refused or kept apart, never put where the next stranger's start lands).
 * Medium (denies a real user of the host: the reviewer). Failed on the code it was written against; passes since its fix.
 */
import { describe, expect, it } from '@jest/globals';
import { sandboxSuite } from '../support/sandbox-suite.js';
import type { Platform } from '../support/verification-app.js';
import { REVIEWER_CODE, reviewerHosts } from '../test-numbers/reviewer-host.js';
import type { StoreKind } from '../verified-phone/guard-host.js';

const CASES: [Platform, StoreKind, string][] = [
  ['express', 'memory', '+79990004451'],
  ['fastify', 'redis', '+79990004452'],
];

describe.each(CASES)(
  'a stranger forces the reviewer into the overflow slot (%s, %s)',
  (platform, kind, reviewer) => {
    const suite = sandboxSuite();
    const reviewerHost = reviewerHosts(suite);

    it("the next stranger's start takes the reviewer's session", async () => {
      const host = await reviewerHost(platform, reviewer, kind, { owner: undefined });
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      const start = (ip: string) => host.start(from(ip));

      // The number's hour (10 kept), then its five spare slots, each from a network of its own.
      for (let net = 0; net < 15; net++) await start(`72.${net}.1.7`);
      // The reviewer starts the number from their own network: every slot is held by others.
      const reviewerIp = '198.51.100.44';
      const id = await start(reviewerIp);
      // One more stranger, from a network never seen: no own session either.
      await start('72.200.1.7');

      const checked = await host.check(id, REVIEWER_CODE, from(reviewerIp));
      expect(checked.body).toMatchObject({ verified: true });
    });

    it("a spare session whose code was entered keeps its slot: the next stranger's start takes another", async () => {
      const host = await reviewerHost(platform, reviewer, kind, { owner: undefined });
      const from = (ip: string) => ({ 'x-forwarded-for': ip });
      const ids: string[] = [];
      // The number's hour (10 kept), then its five spare slots, each from a network of its own.
      for (let net = 0; net < 15; net++) ids.push(await host.start(from(`72.${net}.1.7`)));
      // The newest spare session's user types a wrong code, then a stranger from a new network starts.
      const newest = ids[14]!;
      expect((await host.check(newest, '000000', from('72.14.1.7'))).body).toMatchObject({
        error_code: 'invalid_code',
      });
      await host.start(from('72.201.1.7'));
      expect((await host.check(newest, REVIEWER_CODE, from('72.14.1.7'))).body).toMatchObject({
        verified: true,
      });
      // The stranger took the slot of the newest session no code was entered for.
      expect((await host.check(ids[13]!, REVIEWER_CODE, from('72.13.1.7'))).status).toBe(404);
    });
  },
);
