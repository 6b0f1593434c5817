/**
 * Attack (bad luck; the clock at UTC midnight; dfa936b's retry rules): a week's 7 days of figures shift at
 * midnight, so a window that crosses it is told day by day (windowSince). Were the first 20 minutes of a day
 * left unjudged (a read of the day before not taken as a window's start) and that taken as a window too
 * thin to judge, a demoted method would be "tried again" (degraded, first again) at every midnight
 * 30 minutes after its demotion, however full its windows are of its failures.
 *
 * Here: an outage of the reverse call on +7 915 runs from 22:40 to 00:45 UTC; the host's own explicit
 * reverse calls there fail (7 every 5 minutes, each rescued by SMS), so every window holds 28 dropped
 * outcomes; an `auto` user every 5 minutes reads its health. The defence holds on main: demoted at
 * 23:20, it stays demoted through midnight (2 events). Checked: with a day's first reads taken as
 * no verdict (nextHealth(…, null)), it is degraded again at 00:00 and demoted again at 00:20
 * (`demoted>degraded`, `degraded>demoted` announced).
 */
import { describe, expect, it } from '@jest/globals';
import { EventEmitter2 } from '@nestjs/event-emitter';
import { MethodStats } from '../../src/account/method-stats.service.js';
import type { SessionRecord } from '../../src/core/session-record.js';
import { VerificationOpsEventName, type MethodHealthEvent } from '../../src/core/verification-events.js';
import { PLATFORMS } from '../support/verification-app.js';
import { freshPhone, journeyFixture } from '../journeys/journey-host.js';
import { healthHost, probeUser, toBeforeMidnight } from '../journeys/figure-learning.js';

const MINUTE = 60_000;
let serial = 0;

/** `n` of the host's own reverse calls on +7 915 that failed, each rescued by SMS (switched, verified). */
async function rescued(stats: MethodStats, now: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = `rescued-${process.pid}-${++serial}`;
    const base = {
      phoneNumber: freshPhone(),
      status: 'sent',
      expiresAt: now + 240_000,
      verifiedAt: null,
      journeyId: `journey-${id}`,
    };
    const call = {
      ...base,
      requestId: `${id}-call`,
      method: 'reverse_flash_call',
      awaitingCode: false,
      createdAt: now - 60_000,
      cost: { amount: 0.25, currency: 'RUB' },
    } as SessionRecord;
    const sms = {
      ...base,
      requestId: `${id}-sms`,
      method: 'sms',
      awaitingCode: true,
      createdAt: now - 30_000,
      cost: { amount: 3, currency: 'RUB' },
    } as SessionRecord;
    await stats.tally(call, undefined, 'mobile');
    const earlier = [{ requestId: call.requestId, method: call.method, startedAt: call.createdAt }];
    await stats.tally(sms, undefined, 'mobile', {}, earlier);
    await stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: now }, undefined, 'mobile');
  }
}

describe.each(PLATFORMS)('method health: a demoted method at UTC midnight (%s)', (platform) => {
  const fx = journeyFixture();

  it('a reverse call failing every window across midnight stays demoted through it', async () => {
    const midnight = await toBeforeMidnight(fx, 80 * MINUTE);
    const { host, stats, health } = await healthHost(fx, platform);
    const events: string[] = [];
    host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
      if (event.method === 'reverse_flash_call' && event.prefix === '+7915')
        events.push(`${event.previous}>${event.state}`);
    });
    expect((await probeUser(fx, host)).method).toBe('reverse_flash_call');
    /** The health each 5 minutes' user read after the demotion. */
    const seen = new Set<string>();
    while (fx.sb.now() < midnight + 45 * MINUTE) {
      await fx.sb.advance(5 * MINUTE);
      await rescued(stats, fx.sb.now(), 7);
      await probeUser(fx, host);
      if (events.includes('degraded>demoted')) seen.add(health().join());
    }
    expect({ seen: [...seen], events }).toEqual({
      seen: ['demoted@operator'],
      events: ['healthy>degraded', 'degraded>demoted'],
    });
  }, 240_000);
});
