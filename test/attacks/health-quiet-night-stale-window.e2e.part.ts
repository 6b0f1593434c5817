/**
 * Attack (bad luck; the clock across UTC midnight; a then-read hours old): an instance takes its recent window from
 * its own reads of a method on a prefix, and reads only when one of its users starts there. After a quiet night (no
 * `auto` user of +7 915 on it from 22:00 to 07:00), its first read took the 22:00 read as the window's start: every
 * session since counted as the last 20 minutes', so a reverse-call outage over at 02:00 degraded the method at 07:00
 * (an event, the fallback at half its moment) on figures five hours old. Since the window was counted day by day
 * (996ef039) this reached across midnight; before it, a read of the day before was dropped.
 *
 * Here: a healthy reverse call read at 22:00; its outage from 01:00 to 02:00 (the host's own explicit reverse calls,
 * each rescued by SMS), healthy again from 06:00; the next `auto` user at 07:00. The defence: a then-read more than
 * two windows old is left aside, and the window begins at that read. Checked: without it, `healthy>degraded` at 07:00.
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

/** `n` of the host's own reverse calls on +7 915: verified, or failed and rescued by SMS (switched, verified). */
async function calls(stats: MethodStats, now: number, n: number, verified: boolean): Promise<void> {
  for (let i = 0; i < n; i++) {
    const id = `quiet-${process.pid}-${++serial}`;
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
    await stats.tally(call, undefined, 'mobile');
    if (verified) {
      await stats.tally(
        { ...call, status: 'verified', delivered: true, verifiedAt: now },
        undefined,
        'mobile',
      );
      continue;
    }
    const sms = {
      ...base,
      requestId: `${id}-sms`,
      method: 'sms',
      awaitingCode: true,
      createdAt: now - 30_000,
      cost: { amount: 3, currency: 'RUB' },
    } as SessionRecord;
    const earlier = [{ requestId: call.requestId, method: call.method, startedAt: call.createdAt }];
    await stats.tally(sms, undefined, 'mobile', {}, earlier);
    await stats.tally({ ...sms, status: 'verified', delivered: true, verifiedAt: now }, undefined, 'mobile');
  }
}

describe.each(PLATFORMS)('method health: the first read after a quiet night (%s)', (platform) => {
  const fx = journeyFixture();

  it('an outage over five hours before is not judged as the last 20 minutes', async () => {
    const midnight = await toBeforeMidnight(fx, 120 * MINUTE);
    const { host, stats, health } = await healthHost(fx, platform);
    const events: string[] = [];
    host.app.get(EventEmitter2).on(VerificationOpsEventName.methodHealth, (event: MethodHealthEvent) => {
      if (event.method === 'reverse_flash_call' && event.prefix === '+7915')
        events.push(`${event.previous}>${event.state}`);
    });
    expect((await probeUser(fx, host)).method).toBe('reverse_flash_call');
    await fx.sb.advance(midnight + 60 * MINUTE - fx.sb.now());
    while (fx.sb.now() < midnight + 120 * MINUTE) {
      await fx.sb.advance(5 * MINUTE);
      await calls(stats, fx.sb.now(), 7, false);
    }
    await fx.sb.advance(midnight + 6 * 60 * MINUTE - fx.sb.now());
    await calls(stats, fx.sb.now(), 20, true);
    await fx.sb.advance(midnight + 7 * 60 * MINUTE - fx.sb.now());
    // Its health is read (the first method, by the week's figures the outage lowered, is SMS's now).
    await probeUser(fx, host);
    expect({ health: health().map((h) => h.split('@')[0]), events }).toEqual({
      health: ['healthy'],
      events: [],
    });
  }, 240_000);
});
