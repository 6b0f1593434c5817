/**
 * Attack (issue 47: "named registrations must not share figures unless documented"):
 * two named registrations (north, south) on one store instance (a MemoryStore, or one Redis prefix),
 * each on an API account of its own; protection's counters are pooled on purpose (`protect:*`), the method
 * figures are not (docs/several-accounts.md). North's mobile users on +7 915 seldom complete the
 * reverse call (4 in 40), so north sends them to SMS first; south has no figures, so its mobile users
 * get the price order (the reverse call first), and its figures and health read nothing of north's.
 *
 * The defence holds on main (checked: with `stats` among the shared key families, south sends its
 * mobile users to SMS too). Express only: a matter of the store, not of the routes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { getVerificationToken } from '../../src/module/verification-registration.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { RedisStore } from '../../src/store/redis.store.js';
import type { VerificationStore } from '../../src/store/verification-store.interface.js';
import { FIRST_METHOD_MIN_TTL_MS } from '../../src/verification/first-method.chooser.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { sandboxSuite } from '../support/sandbox-suite.js';
import { call } from '../support/verification-app.js';
import { bootTwoRegistrations } from '../registration/two-registrations.js';
import { seedFigures } from '../journeys/figure-learning.js';
import { freshPhone, type JourneyFixture } from '../journeys/journey-host.js';

describe('first method: two registrations on one store', () => {
  const suite = sandboxSuite();
  let store: VerificationStore | undefined;
  afterEach(async () => {
    await suite.host?.close();
    suite.host = undefined;
    await store?.close();
    store = undefined;
  });

  describe.each([
    ['a MemoryStore', () => new MemoryStore({ clock: () => suite.sb.now() })],
    [
      'one Redis prefix',
      () =>
        new RedisStore({
          url: sharedRedisUrl(),
          keyPrefix: `fig-reg-${process.pid}-${Date.now()}:`,
          clock: () => suite.sb.now(),
        }),
    ],
  ])('on %s', (_, makeStore) => {
    it('north’s figures send its mobile users to SMS; south’s still get the reverse call', async () => {
      store = makeStore();
      const two = await bootTwoRegistrations(suite.sb, () => store);
      suite.host = two.app;
      const [north, south] = two.names;
      const accountOf = (name: string): VerificationAccountService =>
        two.app.app.get(getVerificationToken(VerificationAccountService, name), { strict: false });
      // What each registration counts in (seeding only: the account service's figures).
      const statsOf = (name: string) => (accountOf(name) as unknown as { stats: MethodStats }).stats;
      const northStats = statsOf(north);
      const fx = { sb: suite.sb } as JourneyFixture;
      await seedFigures(fx, northStats, 'sms', 'mobile', 40, 34, 20_000);
      await seedFigures(fx, northStats, 'reverse_flash_call', 'mobile', 40, 4, 30_000);
      await suite.sb.advance(FIRST_METHOD_MIN_TTL_MS);
      const first = async (name: string) => {
        const res = await call(
          two.app.url,
          'POST',
          `/${name}/verification/start`,
          { phone_number: freshPhone(), method: 'auto', device: 'mobile' },
          { 'x-user': 'sue' },
        );
        expect(res.status).toBe(201);
        return res.body.method;
      };
      expect({ north: await first(north), south: await first(south) }).toEqual({
        north: 'sms',
        south: 'reverse_flash_call',
      });
      const southFigures = await accountOf(south).methodStats();
      // South's own start only; its health judged nothing of north's week.
      expect(southFigures.sms).toBeUndefined();
      expect(southFigures.reverse_flash_call).toMatchObject({ started: 1, verified: 0 });
      expect(
        accountOf(south)
          .methodHealth()
          .filter((h) => h.week.ended > 0),
      ).toEqual([]);
    }, 60_000);
  });
});
