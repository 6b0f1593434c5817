/**
 * Attack (attack-p; a damaged world): the deployment's store holds a kept health change for the reverse call on
 * +7 915 that is valid JSON but no record (`null`: another version's, a hand-made fix, a damaged key). Each read
 * of an instance that had not judged yet threw on it before judging (logged as the figures unread): the instance
 * never judged the prefix again while the record lived (7 days), and an outage there never took the reverse call
 * out of first place.
 *
 * Expected: the record is left aside; the outage degrades and demotes the reverse call, its users get SMS first.
 * MemoryStore (Express), Redis URL (Fastify).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { VerificationStore } from '../../src/store/verification-store.interface.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture, journeyHost } from '../journeys/journey-host.js';
import { outageUser, probeUser, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('method health: a kept change that is no record (%s)', (platform) => {
  const fx = journeyFixture();

  it('is left aside: an outage of the reverse call on +7 915 still demotes it, its users get SMS first', async () => {
    const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
    const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `health-null-${process.pid}-${Date.now()}:` };
    try {
      const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
      await a.app
        .get<VerificationStore>(VerificationStore, { strict: false })
        .set('stats-health:{reverse_flash_call:+7915}:state', 'null', 86_400_000);
      const stats = a.app.get(MethodStats, { strict: false });
      await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
      const health = () =>
        a.app
          .get(VerificationAccountService, { strict: false })
          .methodHealth()
          .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
          .map((h) => h.state)[0];
      expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
      // The outage: two users a minute, each switching to SMS and verified there, for up to 100 minutes.
      let users = 0;
      while (health() !== 'demoted' && users < 200) {
        for (let i = 0; i < 2; i++) await outageUser(fx, a, ++users);
        await fx.sb.advance(60_000 - (fx.sb.now() % 60_000));
        await probeUser(fx, a);
      }
      expect(health()).toBe('demoted');
      expect((await probeUser(fx, a)).method).toBe('sms');
    } finally {
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      memory?.close();
    }
  }, 180_000);
});
