/**
 * Attack (bad luck; issue 47's method health: MethodHealthWatch "emits `verification.method_health` on a
 * change (once across instances: a claim in the store)"): each instance judges the health itself, and
 * the claim that makes one change one event is keyed by the change and the 20-minute slot of the clock
 * it was judged in (`Math.floor(now / DEMOTE_AFTER_MS)`). Two instances of one deployment on one Redis
 * read the same figures 30 s or so apart (each on its own users' starts): when a 20-minute slot turns
 * between their reads, each claims a slot of its own, and the one change is announced twice.
 *
 * Here: an outage of the reverse call on +7 915 (20 users, each switched to SMS and verified there);
 * instance A judges it 10 s before a slot turns, instance B 10 s after: both degrade it, and the
 * operator's listeners get `healthy>degraded` twice. On main: 2 events for 1 change, one per
 * instance (checked: with both instances' reads within one slot, 30 s and 10 s before its turn, 1 event).
 * With N instances whose reads of a change spread over up to HEALTH_READ_MS (30 s), a change lands
 * across a turn about once in 40 (30 s of 20 minutes) and is announced up to N times.
 *
 * Expected: one change of one method on one prefix, judged by several instances within a read's
 * period, is announced once. Low (duplicate alerts to operations; no user sees it).
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { VerificationAccountService } from '../../src/account/verification-account.service.js';
import { DEMOTE_AFTER_MS, HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { sharedRedisUrl } from '../support/redis-server.js';
import { PLATFORMS, type TestApp } from '../support/verification-app.js';
import { journeyFixture, journeyHost, secondInstance } from '../journeys/journey-host.js';
import { outageUser, probeUser, seedFigures } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('method health judged by two instances on one Redis (%s)', (platform) => {
  const fx = journeyFixture();

  it('one degradation of the reverse call on +7 915 is announced once, though the instances judge it across a 20-minute slot', async () => {
    const store = { url: sharedRedisUrl(), keyPrefix: `health-two-${process.pid}-${Date.now()}:` };
    const a = await journeyHost(fx, platform, { store }, {}, { trustProxy: true });
    // A second instance of the same deployment: same account, keys and Redis.
    const b = await secondInstance(fx, platform, { store });
    const events: string[] = [];
    const health: Record<string, () => string[]> = {};
    for (const [name, host] of [
      ['a', a],
      ['b', b],
    ] as [string, TestApp][]) {
      host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
        if (event.method === 'reverse_flash_call' && event.prefix === '+7915')
          events.push(`${name}: ${event.previous}>${event.state}`);
      });
      const account = host.app.get(VerificationAccountService, { strict: false });
      health[name] = () =>
        account
          .methodHealth()
          .filter((h) => h.method === 'reverse_flash_call' && h.prefix === '+7915')
          .map((h) => h.state);
    }
    const stats = a.app.get(MethodStats, { strict: false });
    // The slot the instances' judgements straddle: its turn, 10 s between A's read and B's.
    let turn = (Math.floor(fx.sb.now() / DEMOTE_AFTER_MS) + 1) * DEMOTE_AFTER_MS;
    while (turn - fx.sb.now() < HEALTH_WINDOW_MS + 5 * 60_000) turn += DEMOTE_AFTER_MS;
    await fx.sb.advance(turn - HEALTH_WINDOW_MS - 60_000 - fx.sb.now());
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
    // Each instance reads the figures once (a user of its own), 20 s apart.
    expect((await probeUser(fx, a)).method).toBe('reverse_flash_call');
    await fx.sb.advance(20_000);
    expect((await probeUser(fx, b)).method).toBe('reverse_flash_call');

    // The outage: 20 +7 915 users on A, none gets the reverse call through; each switches to SMS and is verified.
    for (let i = 0; i < 20; i++) {
      await outageUser(fx, a, i);
      await fx.sb.advance(10_000);
    }
    // A's user 10 s before the slot turns, B's 10 s after: each judges the same window.
    await fx.sb.advance(turn - 10_000 - fx.sb.now());
    await probeUser(fx, a);
    await fx.sb.advance(20_000);
    await probeUser(fx, b);
    await fx.sb.webhooksIdle();

    expect({ a: health.a!(), b: health.b!() }).toEqual({ a: ['degraded'], b: ['degraded'] });
    expect({ events: events.length, changes: 1 }).toEqual({ events: 1, changes: 1 });
  }, 180_000);
});
