/**
 * Attack (bad luck; issue 47: "demote within the hour"): an outage of the reverse call on +7 915 (two
 * users a minute, each switching to SMS and verified there) degrades it on instance A, then demotes it.
 * A second instance of the deployment boots (a deploy, an autoscaler) while the outage goes on. Each
 * instance kept its health in memory alone: the new one started healthy, needed a window of its own
 * reads before any verdict and a demotion's delay after it, and sent its users to the dead method first
 * for 40 minutes or more (attack-n, b10cbc9: the first user on B got the reverse call).
 *
 * Expected: the new instance starts where the deployment is: its first user is sent to SMS first.
 * The deployment's store is given both ways: one MemoryStore instance shared by the two apps (Express),
 * a Redis URL (Fastify).
 */
import { describe, expect, it } from '@jest/globals';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { journeyFixture, journeyHost, secondInstance } from '../journeys/journey-host.js';
import { outageUser, probeUser, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('method health: an instance booted during an outage (%s)', (platform) => {
  const fx = journeyFixture();

  it('takes the deployment’s demotion of the reverse call: its first +7 915 user gets SMS first', async () => {
    const memory = platform === 'express' ? new MemoryStore({ clock: () => fx.sb.now() }) : undefined;
    const store = memory ?? { url: sharedRedisUrl(), keyPrefix: `health-boot-${process.pid}-${Date.now()}:` };
    try {
      const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
      const stats = a.app.get(MethodStats, { strict: false });
      await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
      await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
      const health = (host: TestApp) =>
        host.app
          .get(VerificationAccountService, { strict: false })
          .methodHealth()
          .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
          .map((h) => h.state);
      expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
      // The outage, on A: two users a minute until A demotes the reverse call.
      let users = 0;
      while (health(a)[0] !== 'demoted') {
        for (let i = 0; i < 2; i++) await outageUser(fx, a, ++users);
        await fx.sb.advance(60_000 - (fx.sb.now() % 60_000));
        await probeUser(fx, a);
        expect(users).toBeLessThan(200);
      }
      expect((await probeUser(fx, a)).method).toBe('sms');
      // B boots into the outage.
      const b = await secondInstance(fx, platform, { store });
      expect((await probeUser(fx, b)).method).toBe('sms');
      expect(health(b)).toEqual(['demoted']);
    } finally {
      await Promise.all(fx.hosts.splice(0).map((host) => host.close()));
      memory?.close();
    }
  }, 180_000);
});
