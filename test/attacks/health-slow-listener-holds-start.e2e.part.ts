/**
 * Attack (bad luck; issue 47's `verification.method_health`): the event is emitted by the read of the health
 * that judged the change, and that read is part of a user's start with `auto` (the first method is chosen
 * after it). The watch awaited the host's listeners: an alerting listener that pages operations over HTTP
 * (seconds; or hangs on a dead endpoint) held that user's start until it settled, however long. The module's
 * other ops events are not awaited by the request they come from (protection's: "a slow alerting listener
 * must not hold the refused request").
 *
 * Here: an outage of the reverse call on +7 915 (20 users, each switched to SMS and verified there); the
 * host's listener of method health holds its promise until the test lets it go. The next user's start on
 * `auto`, whose read degrades the reverse call, answers before the listener settles; the event is received.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { MethodStats } from '../../src/account/method-stats.service.js';
import { HEALTH_WINDOW_MS } from '../../src/account/method-health.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { PLATFORMS } from '../support/verification-app.js';
import { journeyFixture, journeyHost } from '../journeys/journey-host.js';
import { outageUser, probeUser, seedFigures, toBeforeMidnight } from '../journeys/figure-learning.js';

describe.each(PLATFORMS)('method health: a slow listener of its event (%s)', (platform) => {
  let release = (): void => undefined;
  // Before the fixture's: the host closes once the listener is let go.
  afterEach(() => release());
  const fx = journeyFixture();

  it('the start whose read degrades the reverse call answers while the listener is still busy', async () => {
    // The outage begins 10 minutes before a UTC midnight: the window that degrades the method crosses it.
    await toBeforeMidnight(fx, 10 * 60_000);
    const host = await journeyHost(fx, platform, {}, {}, { trustProxy: true });
    const events: string[] = [];
    const held = new Promise<void>((resolve) => (release = resolve));
    host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
      events.push(`${event.method}@${event.prefix}: ${event.previous}>${event.state}`);
      return held;
    });
    const stats = host.app.get(MethodStats, { strict: false });
    await seedFigures(fx, stats, 'sms', 'mobile', 40, 34, 40_000);
    await seedFigures(fx, stats, 'reverse_flash_call', 'mobile', 40, 32, 25_000);
    expect((await probeUser(fx, host)).method).toBe('reverse_flash_call');
    // The outage: 20 +7 915 users, none gets the reverse call through; each switches to SMS and is verified.
    for (let i = 0; i < 20; i++) {
      await outageUser(fx, host, i);
      await fx.sb.advance(10_000);
    }
    await fx.sb.advance(HEALTH_WINDOW_MS);
    // The listener is still busy when this start answers (on main: the start waits for it, the test times out).
    const answered = await probeUser(fx, host);
    expect(answered.method).toBe('reverse_flash_call');
    expect(events).toEqual(['reverse_flash_call@+7915: healthy>degraded']);
  }, 30_000);
});
