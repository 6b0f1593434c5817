import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import {
  attempt,
  expectLiftsAt,
  HOLD_MS,
  inRange,
  MINUTE,
  ownRange,
  pumpingHarness,
  T0,
  verifiedEvent,
} from './pumping-harness.js';

/**
 * The pumping defence's holds one start at a time, with small thresholds: which subject is held and
 * when, what the refusal and the report say, how a hold ends and comes back longer.
 * (pumping-subjects.part.ts: what is counted for whom; src/pumping/pumping-defence.spec.ts holds
 * its properties over random traffic.)
 */

describe('PumpingDefence: holds', () => {
  const defence = pumpingHarness();

  it('holds a range after its minimum of unconverted starts from other numbers, and reports it once', async () => {
    const { start, reported, pumping, clock } = defence();
    for (let i = 0; i < 3; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
    const refused = await start(attempt(inRange(3), { owner: 'user-9' }));
    expect(refused).toBeInstanceOf(ProtectionRefusal);
    const refusal = refused as ProtectionRefusal;
    expect([refusal.reason, refusal.getStatus()]).toEqual(['range_held', 429]);
    // A range's wait is when the hold really lifts (past its cool-off, once the window has rolled),
    // coarse (whole 5-minute steps): it says nothing about one caller.
    expect(refusal.retryAfterSeconds! * 1000).toBeGreaterThanOrEqual(HOLD_MS);
    expect(refusal.retryAfterSeconds! % 300).toBe(0);
    await expectLiftsAt(pumping, clock, attempt(inRange(50)), refusal.retryAfterSeconds!, 300);
    expect(reported.events).toEqual([
      {
        event: 'verification.fraud_suspected',
        reason: 'range_held',
        mode: 'enforce',
        range: '+7916123',
        prefix: '+7916',
        country: 'RU',
        subject: 'range',
        rule: 'unconverted',
        owner: 'user-9',
        phoneNumberMasked: '+7******0003',
        countryUnderAttack: false,
        counts: { starts: 3, verified: 0 },
        holdMs: HOLD_MS,
        heldUntil: new Date(T0 + HOLD_MS),
      },
    ]);
    expect(reported.warnings).toEqual([
      {
        message: 'pumping defence: starts that do not complete; hold started',
        context: {
          reason: 'range_held',
          mode: 'enforce',
          subject: 'range',
          rule: 'unconverted',
          range: '+7916123',
          prefix: '+7916',
          country: 'RU',
          starts: 3,
          verified: 0,
          hold_ms: HOLD_MS,
        },
      },
    ]);
    expect(reported.suspected).toEqual(['range_held/enforce']);

    // While the hold runs, its starts are refused without a new report; other ranges pass.
    expect(((await start(attempt(inRange(4)))) as ProtectionRefusal).reason).toBe('range_held');
    expect(reported.events).toHaveLength(1);
    expect(reported.refusals).toEqual(['range_held/enforce', 'range_held/enforce']);
    expect(await start(attempt('+79261234567'))).toBe('ok');
  });

  // A held attempt counts where it was held, so that a held range's window does not empty while its
  // attempts go on; never for its country, whose judgement of everyone weighs what went ahead.
  it('a held attempt counts for its range, not its country: the held range stays unconverted when its window rolls over', async () => {
    const { pumping, start, clock } = defence();
    for (let i = 0; i < 3; i++) await start(attempt(inRange(i)));
    for (let i = 3; i < 8; i++) await start(attempt(inRange(i)));
    const assessment = await pumping.assess(attempt(inRange(9)));
    expect(assessment?.counts.get('range:+7916123')?.starts).toBe(8);
    expect(assessment?.counts.get('prefix:+7916')?.starts).toBe(8);
    expect(assessment?.counts.get('country:RU')).toMatchObject({ starts: 3, recent: 3 });
    expect(assessment?.counts.get('country:RU')?.day).toMatchObject({ starts: 3 });
    expect(assessment?.counts.get('country:RU')?.week).toMatchObject({ starts: 3 });
    // Past the hold and into the next window, the attempts still weigh: held again, not one let through.
    clock.now += HOLD_MS + 5 * MINUTE;
    expect(((await start(attempt(inRange(10)))) as ProtectionRefusal).reason).toBe('range_held');
  });

  it('a range nobody verified in takes a burst from only freshRangeMinStarts callers, judged one by one when simultaneous', async () => {
    const { start, reported } = defence({ rangeMinStarts: 20, freshRangeMinStarts: 3 });
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) => start(attempt(inRange(i), { clientKey: `addr-${i}` }))),
    );
    expect(answers.filter((a) => a === 'ok')).toHaveLength(3);
    expect(reported.events[0]).toMatchObject({ subject: 'range', rule: 'fresh_burst' });
  });

  it("one caller's starts into a fresh range are not a burst: the normal minimum applies", async () => {
    const { start } = defence({ rangeMinStarts: 20, freshRangeMinStarts: 3, callerMinStarts: 50 });
    for (let i = 0; i < 12; i++)
      expect(await start(attempt(inRange(i), { clientKey: 'one-office' }))).toBe('ok');
  });

  it("a burst's callers are its client keys when the host keys clients (limits.key), not their addresses", async () => {
    const settings = { rangeMinStarts: 20, freshRangeMinStarts: 3, callerMinStarts: 50 };
    // Twelve signed-in clients behind one office address, each a new number: twelve callers, a burst.
    const office = defence(settings);
    const behindOne = [];
    for (let i = 0; i < 12; i++)
      behindOne.push(await office.start(attempt(inRange(i), { clientKey: `user-${i}`, ip: '203.0.113.7' })));
    expect(behindOne.filter((a) => a === 'ok')).toHaveLength(3);
    expect(office.reported.events[0]).toMatchObject({ subject: 'range', rule: 'fresh_burst' });
    // One client roaming over twelve addresses: one caller, the normal minimum.
    const roaming = defence(settings);
    for (let i = 0; i < 12; i++)
      expect(await roaming.start(attempt(inRange(i), { clientKey: 'user-1', ip: `198.51.100.${i}` }))).toBe(
        'ok',
      );
    expect(roaming.reported.events).toStrictEqual([]);
  });

  it("a host's own starts (no client key, no address): a burst's callers are their owners", async () => {
    const settings = { rangeMinStarts: 20, freshRangeMinStarts: 3, callerMinStarts: 50 };
    // Twelve owners, each a new number: twelve callers, a burst.
    const owners = defence(settings);
    const byTwelve = [];
    for (let i = 0; i < 12; i++)
      byTwelve.push(await owners.start(attempt(inRange(i), { owner: `owner-${i}` })));
    expect(byTwelve.filter((a) => a === 'ok')).toHaveLength(3);
    expect(owners.reported.events[0]).toMatchObject({ subject: 'range', rule: 'fresh_burst' });
    // One owner over twelve numbers: one caller, the normal minimum.
    const one = defence(settings);
    for (let i = 0; i < 12; i++)
      expect(await one.start(attempt(inRange(i), { owner: 'owner-1' }))).toBe('ok');
    expect(one.reported.events).toStrictEqual([]);
  });

  it("a signed-in start's caller in a burst is its client key, not its owner", async () => {
    const settings = { rangeMinStarts: 20, freshRangeMinStarts: 3, callerMinStarts: 50 };
    // One owner over twelve client keys: twelve callers, a burst.
    const roaming = defence(settings);
    const answers = [];
    for (let i = 0; i < 12; i++)
      answers.push(await roaming.start(attempt(inRange(i), { owner: 'owner-1', clientKey: `key-${i}` })));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(3);
    expect(roaming.reported.events[0]).toMatchObject({ subject: 'range', rule: 'fresh_burst' });
    // Twelve owners behind one client key: one caller, the normal minimum.
    const office = defence(settings);
    for (let i = 0; i < 12; i++)
      expect(await office.start(attempt(inRange(i), { owner: `owner-${i}`, clientKey: 'office' }))).toBe(
        'ok',
      );
    expect(office.reported.events).toStrictEqual([]);
  });

  it("a prefix's running hold does not hold a start whose range converts", async () => {
    const { pumping, start, sessionId, reported } = defence({ prefixMinStarts: 10, rangeMinStarts: 50 });
    // Two numbers of one range verified, then unconverted starts over other ranges of the prefix.
    for (let i = 0; i < 2; i++) {
      expect(await start(attempt(inRange(i), { clientKey: `user-${i}` }))).toBe('ok');
      await pumping.verified(verifiedEvent(sessionId(), inRange(i)));
    }
    const answers = [];
    for (let r = 0; r < 12; r++)
      answers.push(
        await start(attempt(`+7916${String(r + 200).padStart(3, '0')}0000`, { clientKey: `p-${r}` })),
      );
    expect(answers.at(-1)).toBeInstanceOf(ProtectionRefusal);
    expect(reported.events[0]).toMatchObject({ subject: 'prefix', prefix: '+7916' });
    // The hold runs, yet a new number of the converting range goes on; another range stays held.
    expect(await start(attempt(inRange(7), { clientKey: 'user-7' }))).toBe('ok');
    expect(await start(attempt('+79164440000', { clientKey: 'user-8' }))).toBeInstanceOf(ProtectionRefusal);
  });

  it('an operator prefix is judged on its own: waves into fresh ranges of one prefix are held there', async () => {
    const { start, reported } = defence({ freshPrefixMinStarts: 4 });
    const answers: unknown[] = [];
    for (let r = 0; r < 4; r++)
      for (let i = 0; i < 2; i++)
        answers.push(await start(attempt(`+7926${r}00000${i}`, { clientKey: `addr-${r}-${i}` })));
    expect(answers.filter((a) => a === 'ok')).toHaveLength(4);
    expect(reported.events[0]).toMatchObject({ subject: 'prefix', prefix: '+7926', rule: 'fresh_burst' });
    // Another prefix is not touched.
    expect(await start(attempt('+79851230000', { clientKey: 'addr-x' }))).toBe('ok');
  });

  it("a prefix's wait is coarse like a range's (whole 5-minute steps), and the hold has lifted by then", async () => {
    const { start, pumping, clock } = defence({ prefixMinStarts: 3 });
    // Three unconverted starts in three ranges of one prefix, by nobody in particular: the prefix is held.
    for (let r = 0; r < 3; r++) expect(await start(attempt(`+7926${r}000000`))).toBe('ok');
    clock.now += 37_000;
    const refused = (await start(attempt('+79263000000'))) as ProtectionRefusal;
    expect(refused.reason).toBe('range_held');
    expect(refused.retryAfterSeconds! * 1000).toBeGreaterThanOrEqual(HOLD_MS);
    expect(refused.retryAfterSeconds! % 300).toBe(0);
    // Rounded up, never down: once the caller has waited it, the hold has lifted.
    clock.now += refused.retryAfterSeconds! * 1000;
    expect((await pumping.assess(attempt('+79264000000')))?.held).toBeUndefined();
  });

  it('a hold ends after its cool-off; a pattern that goes on gets one twice as long, up to the maximum', async () => {
    const { start, clock, reported } = defence({ maxHoldMs: 3 * HOLD_MS });
    for (let i = 0; i < 3; i++) await start(attempt(inRange(i)));
    await start(attempt(inRange(3)));
    clock.now += HOLD_MS;
    // The window still shows the range not converting: held again, twice as long.
    const again = (await start(attempt(inRange(5)))) as ProtectionRefusal;
    // Its Retry-After is when it really lifts: not before the longer cool-off ends.
    expect(again.retryAfterSeconds! * 1000).toBeGreaterThanOrEqual(2 * HOLD_MS);
    clock.now += 2 * HOLD_MS;
    await start(attempt(inRange(6)));
    expect(reported.events.map((e) => e.holdMs)).toEqual([HOLD_MS, 2 * HOLD_MS, 3 * HOLD_MS]);
    expect(reported.events.map((e) => e.heldUntil)).toEqual([
      new Date(T0 + HOLD_MS),
      new Date(T0 + 3 * HOLD_MS),
      new Date(T0 + 6 * HOLD_MS),
    ]);
  });

  it("a held range's own number, its retries left out of the range's count, is told no longer a wait than a newcomer, and is let in by then", async () => {
    const { start, pumping, clock } = defence();
    for (let i = 0; i < 3; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
    const newcomer = (await start(attempt(inRange(3)))) as ProtectionRefusal;
    const own = (await start(attempt(inRange(0)))) as ProtectionRefusal;
    expect([newcomer.reason, own.reason]).toStrictEqual(['range_held', 'range_held']);
    expect(own.retryAfterSeconds!).toBeLessThanOrEqual(newcomer.retryAfterSeconds!);
    clock.now += own.retryAfterSeconds! * 1000;
    expect((await pumping.assess(attempt(inRange(0))))?.held).toBeUndefined();
  });

  it('a held range is let go as soon as its starts convert (its first users completed)', async () => {
    const { pumping, start, sessionId } = defence();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      await start(attempt(inRange(i)));
      ids.push(sessionId());
    }
    expect(await start(attempt(inRange(3)))).toBeInstanceOf(ProtectionRefusal);
    await pumping.verified(verifiedEvent(ids[0]!, inRange(0)));
    expect(await start(attempt(inRange(3)))).toBe('ok');
  });

  it('an owner starting many ranges is held with the exact wait; its verifications count where it started', async () => {
    const { pumping, start, sessionId, clock } = defence();
    for (let i = 0; i < 3; i++) await start(attempt(ownRange(i), { owner: 'user-1' }));
    const refused = (await start(attempt(ownRange(3), { owner: 'user-1' }))) as ProtectionRefusal;
    expect(refused.reason).toBe('owner_held');
    // The moment it lifts (to the minute): past the cool-off, once the window no longer holds the owner.
    expect(refused.retryAfterSeconds! * 1000).toBeGreaterThanOrEqual(HOLD_MS);
    const later = { ...clock };
    expect(await start(attempt(ownRange(3), { owner: 'user-2' }))).toBe('ok');
    await expectLiftsAt(
      pumping,
      clock,
      attempt(ownRange(60), { owner: 'user-1' }),
      refused.retryAfterSeconds!,
      60,
    );
    clock.now = later.now;

    // Another owner who completes its verifications is never held.
    for (let i = 10; i < 20; i++) {
      expect(await start(attempt(ownRange(i), { owner: 'user-3' }))).toBe('ok');
      await pumping.verified(verifiedEvent(sessionId(), ownRange(i), 'user-3'));
    }
  });

  it('a caller whose beforeStart challenge passed gets through a hold (it is still reported)', async () => {
    const { start, reported } = defence();
    for (let i = 0; i < 3; i++) await start(attempt(inRange(i)));
    expect(await start(attempt(inRange(3)), true)).toBe('ok');
    expect(reported.refusals).toEqual(['range_held/enforce']);
    expect(reported.events).toHaveLength(1);
  });

  it('in monitor mode nothing is refused, and what would have been is reported as monitor', async () => {
    const { pumping, start, reported } = defence({ mode: 'monitor' });
    for (let i = 0; i < 5; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
    expect(reported.events.map((e) => [e.reason, e.mode])).toEqual([['range_held', 'monitor']]);
    expect(reported.suspected).toEqual(['range_held/monitor']);
    expect(reported.refusals).toEqual(['range_held/monitor', 'range_held/monitor']);
    expect(pumping.signal(await pumping.assess(attempt(inRange(9))))).toEqual({
      reason: 'range_held',
      range: '+7916123',
      country: 'RU',
    });
  });

  it('tells beforeStart nothing for a start it would let through', async () => {
    const { pumping } = defence();
    expect(pumping.signal(await pumping.assess(attempt(inRange(0))))).toBeUndefined();
    expect(pumping.signal(undefined)).toBeUndefined();
  });
});
