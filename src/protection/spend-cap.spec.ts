import { afterEach, describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import type { MemoryStore } from '../store/memory.store.js';
import { chargedAtEnd, warnWhenSpendUnbounded } from './spend-cap.js';
import { DAY, refusalOf, rub, spendCap } from '../../test/support/spend-cap.fixture.js';
import { dumpMemoryStore } from '../../test/support/store-dump.js';

describe('SpendCap', () => {
  const stores: MemoryStore[] = [];
  const make = (...args: Parameters<typeof spendCap>) => {
    const made = spendCap(...args);
    stores.push(made.store);
    return made;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  it("reserves each start's estimate; the start that would pass the cap is refused with 503 until the window ends", async () => {
    const { cap } = make({ amount: 10 }, 300);
    for (let i = 0; i < 3; i++) await cap.reserve('sms');
    expect(await cap.spentShare()).toBeCloseTo(0.9);
    const refused = await refusalOf(cap.reserve('sms'));
    expect(refused?.reason).toBe('spend_cap');
    expect(refused?.getStatus()).toBe(503);
    // The window is the UTC day: 14 hours are left at 10:00.
    expect(refused?.retryAfterSeconds).toBe(14 * 3600);
    // The refused estimate is not kept: the spent share stays where it was.
    expect(await cap.spentShare()).toBeCloseTo(0.9);
  });

  it('a start that exactly reaches the cap is let through', async () => {
    const { cap } = make({ amount: 9 }, 300);
    for (let i = 0; i < 3; i++) await cap.reserve('sms');
    expect(await cap.spentShare()).toBe(1);
    expect((await refusalOf(cap.reserve('sms')))?.reason).toBe('spend_cap');
  });

  it('settles the reservation with the real cost: more is charged, less is given back, none keeps the estimate', async () => {
    const { cap, learned } = make({ amount: 20 }, 300);
    await (await cap.reserve('sms')).settle(rub(5));
    expect(await cap.spentShare()).toBeCloseTo(0.25);
    await (await cap.reserve('sms')).settle(rub(1));
    expect(await cap.spentShare()).toBeCloseTo(0.3);
    await (await cap.reserve('sms')).settle(undefined);
    expect(await cap.spentShare()).toBeCloseTo(0.45);
    await (await cap.reserve('voice')).settle(rub(3));
    expect(await cap.spentShare()).toBeCloseTo(0.6);
    // The real costs teach the price estimate.
    expect(learned).toStrictEqual([
      ['sms', rub(5)],
      ['sms', rub(1)],
      ['voice', rub(3)],
    ]);
  });

  it('a released reservation gives its estimate back; a reservation is settled or released once', async () => {
    const { cap } = make({ amount: 10 }, 300);
    const first = await cap.reserve('sms');
    await first.release();
    expect(await cap.spentShare()).toBe(0);
    await first.release();
    await first.settle(rub(5));
    expect(await cap.spentShare()).toBe(0);

    const second = await cap.reserve('sms');
    await second.settle(rub(4));
    await second.release();
    await second.settle(rub(9));
    expect(await cap.spentShare()).toBeCloseTo(0.4);
  });

  it('announces the cap once per window, across refusals, with what was spent', async () => {
    const { cap, clock, events, warnings } = make({ amount: 10 }, 400);
    await (await cap.reserve('sms')).settle(rub(4.5));
    await cap.reserve('sms');
    await refusalOf(cap.reserve('sms'));
    await refusalOf(cap.reserve('sms'));
    const windowEndsAt = new Date(Date.UTC(2026, 0, 2));
    expect(events).toStrictEqual([
      {
        event: 'verification.spend_cap_reached',
        spent: 8.5,
        cap: 10,
        currency: 'RUB',
        windowMs: DAY,
        windowEndsAt,
      },
    ]);
    expect(warnings).toStrictEqual([
      {
        message: 'spend cap reached: starts are refused until the window ends',
        context: { spent: 8.5, cap: 10, currency: 'RUB', window_ends_at: windowEndsAt.toISOString() },
      },
    ]);

    // The next day is a new window: its budget is whole again, and its first refusal is announced.
    clock.now += DAY;
    expect(await cap.spentShare()).toBe(0);
    for (let i = 0; i < 2; i++) await cap.reserve('sms');
    const refused = await refusalOf(cap.reserve('sms'));
    expect(refused?.retryAfterSeconds).toBe(14 * 3600);
    expect(events).toHaveLength(2);
    expect(events[1]).toMatchObject({ spent: 8, windowEndsAt: new Date(Date.UTC(2026, 0, 3)) });
  });

  it('a day window starts at midnight of the configured UTC offset', async () => {
    // UTC+3: the window ends at 21:00 UTC, eleven hours after 10:00 UTC.
    const { cap, clock, store } = make({ amount: 3, utcOffsetMinutes: 180 }, 300);
    await cap.reserve('sms');
    const refused = await refusalOf(cap.reserve('sms'));
    expect(refused?.retryAfterSeconds).toBe(11 * 3600);
    // At 21:00 UTC the day at +03:00 turns: the cap is whole again.
    clock.now = Date.UTC(2026, 0, 1, 21);
    await cap.reserve('sms');
    // Counters of another offset are another stretch of time: they are not shared with the UTC window.
    const utc = spendCap({ amount: 3, utcOffsetMinutes: 0 }, 300, undefined, { store, clock }).cap;
    expect(await utc.spentShare()).toBe(0);
  });

  const session = (n: number, clockNow: number) => ({ requestId: `rfc-${n}`, expiresAt: clockNow + 300_000 });

  it('a method charged on proof reserves nothing: reverse flash calls nobody proves never fill the cap, and an SMS still fits after them', async () => {
    const { cap, clock } = make({ amount: 10 }, 100);
    for (let i = 0; i < 40; i++)
      await (await cap.reserve('reverse_flash_call')).settle(rub(1), session(i, clock.now));
    expect(await cap.spentShare()).toBe(0);
    for (let i = 0; i < 40; i++) await cap.ended(`rfc-${i}`, { verified: false, delivered: false });
    expect(await cap.spentShare()).toBe(0);
    for (let i = 0; i < 10; i++) await cap.reserve('sms');
    expect(await cap.spentShare()).toBe(1);
  });

  it('a session charged on proof is counted once when it ends proved, in the window where it ends', async () => {
    const { cap, clock } = make({ amount: 10 }, 100);
    clock.now = Date.UTC(2026, 0, 1, 23, 58);
    await (await cap.reserve('msgr2_bot')).settle(rub(1), session(1, clock.now));
    await (await cap.reserve('reverse_flash_call')).settle(rub(0.25), session(2, clock.now));
    // The bot is charged once the user shared the number (delivered): counted at its end.
    await cap.ended('rfc-1', { verified: false, delivered: true });
    expect(await cap.spentShare()).toBeCloseTo(0.1);
    await cap.ended('rfc-1', { verified: false, delivered: true });
    expect(await cap.spentShare()).toBeCloseTo(0.1);
    // The call is proved after midnight: the next day's window counts it.
    clock.now = Date.UTC(2026, 0, 2, 0, 1);
    await cap.ended('rfc-2', { verified: true, delivered: true });
    expect(await cap.spentShare()).toBeCloseTo(0.025);
  });

  it("an ended session's window entries leave the store when its window ends, a tick after and not before", async () => {
    const { cap, clock, store } = make({ amount: 10 }, 100);
    await (await cap.reserve('sms')).settle(rub(3), session(1, clock.now));
    // Undelivered as far as the module saw: kept unproven until usage says, to the window's end.
    await cap.ended('rfc-1', { verified: false, delivered: false });
    const live = async () => {
      const keys = dumpMemoryStore(store).map((line) => line.split(' ')[0]!);
      const held = await Promise.all(keys.map(async (key) => ((await store.get(key)) === null ? [] : [key])));
      return held.flat();
    };
    const windowEnds = Date.UTC(2026, 0, 2);
    clock.now = windowEnds - 1;
    expect(await live()).not.toStrictEqual([]);
    clock.now = windowEnds;
    expect(await live()).toStrictEqual([]);
  });

  it('a session whose end two instances report at once is counted once; an SMS whose delivery nobody saw stays counted', async () => {
    const { cap, clock } = make({ amount: 10 }, 100);
    const bot = cap.reserve('msgr2_bot');
    await (await bot).settle(rub(1), session(1, clock.now));
    const delivered = { verified: false, delivered: true };
    await Promise.all([cap.ended('rfc-1', delivered), cap.ended('rfc-1', delivered)]);
    expect(await cap.spentShare()).toBeCloseTo(0.1);
    // An SMS whose delivery nobody saw: the API may have charged it (a read outage), so it stays.
    await (await cap.reserve('sms')).settle(rub(3), session(2, clock.now));
    expect(await cap.spentShare()).toBeCloseTo(0.4);
    const undelivered = { verified: false, delivered: false };
    await Promise.all([cap.ended('rfc-2', undelivered), cap.ended('rfc-2', undelivered)]);
    expect(await cap.spentShare()).toBeCloseTo(0.4);
  });

  it("the day's usage gives back what the API did not charge, once, never a live session's; a refused start is asked again", async () => {
    let charged = 0;
    const reads: string[] = [];
    const { cap, clock } = make({ amount: 9 }, 300, async (date) => {
      reads.push(date);
      return charged;
    });
    for (let i = 0; i < 3; i++) await (await cap.reserve('sms')).settle(rub(3), session(i, clock.now));
    await cap.ended('rfc-0', { verified: false, delivered: false });
    await cap.ended('rfc-1', { verified: false, delivered: false });
    // The API charged 3 RUB: rfc-2's, still live, delivered. Of 9 counted, 3 are live and 3 charged:
    // 3 of the 6 unproven come back (one of the two ended ones was charged, the live one stays).
    charged = 300;
    await (await cap.reserve('sms')).settle(rub(3), session(3, clock.now));
    expect(reads).toStrictEqual(['2026-01-01']);
    expect(await cap.spentShare()).toBeCloseTo(1);
    // Nothing more to give back, and the usage is read at most every 30 s.
    expect(await refusalOf(cap.reserve('sms'))).toBeInstanceOf(ProtectionRefusal);
    expect(reads).toHaveLength(1);
    // The API charged more than the cap counted (proofs the module never saw): counted now.
    clock.now += 31_000;
    charged = 1_500;
    expect(await refusalOf(cap.reserve('sms'))).toBeInstanceOf(ProtectionRefusal);
    expect(await cap.spentShare()).toBeCloseTo(1500 / 900);
  });

  it('a reservation whose API call has not answered is live at a usage read: none of it is taken for money not charged', async () => {
    const { cap, clock } = make({ amount: 9 }, 300, async () => 300);
    await (await cap.reserve('sms')).settle(rub(3), session(0, clock.now));
    await cap.ended('rfc-0', { verified: false, delivered: false });
    // Two starts reserved, their calls in flight: 9 counted, 6 of it live, 3 charged by the API.
    const inFlight = [await cap.reserve('sms'), await cap.reserve('sms')];
    expect(await refusalOf(cap.reserve('sms'))).toBeInstanceOf(ProtectionRefusal);
    expect(await cap.spentShare()).toBeCloseTo(1);
    // One answers, one fails (released): the released one's 3 RUB come back, nothing more.
    await inFlight[0]!.settle(rub(3), session(1, clock.now));
    await inFlight[1]!.release();
    clock.now += 31_000;
    await (await cap.reserve('sms')).settle(rub(3), session(2, clock.now));
    expect(await refusalOf(cap.reserve('sms'))).toBeInstanceOf(ProtectionRefusal);
    expect(await cap.spentShare()).toBeCloseTo(1);
  });

  it('a method charged on proof is refused when its price no longer fits the cap or the share it may take; without its session it is counted at once', async () => {
    const { cap, clock } = make({ amount: 10 }, 100);
    for (let i = 0; i < 7; i++) await cap.reserve('sms');
    expect((await refusalOf(cap.reserve('reverse_flash_call', 0.3)))?.extra).toMatchObject({
      last_share: true,
    });
    await (await cap.reserve('reverse_flash_call')).settle(rub(1));
    expect(await cap.spentShare()).toBeCloseTo(0.8);
    await cap.reserve('sms');
    // 9 of 10 RUB: a 1 RUB proof still fits, and takes nothing until it is proved.
    await (await cap.reserve('reverse_flash_call')).settle(rub(1), session(3, clock.now));
    expect(await cap.spentShare()).toBeCloseTo(0.9);
    await cap.reserve('sms');
    const refused = await refusalOf(cap.reserve('reverse_flash_call'));
    expect({ reason: refused?.reason, status: refused?.getStatus() }).toStrictEqual({
      reason: 'spend_cap',
      status: 503,
    });
  });

  it("a journey's step left pending does not hold the cap's share: the switch after a reverse flash call fits where it would have been refused", async () => {
    const { cap, clock } = make({ amount: 10 }, 100);
    for (let i = 0; i < 7; i++) await cap.reserve('sms');
    // The journey's first step, a reverse flash call the user has not made (yet)…
    await (await cap.reserve('reverse_flash_call')).settle(rub(1), session(4, clock.now));
    // …then its switch to an SMS, past which the last 20 % is kept: 8 of 10 RUB.
    await cap.reserve('sms', 0.2);
    expect(await cap.spentShare()).toBeCloseTo(0.8);
    // The left call is made after all: the host pays for it, and the cap counts it.
    await cap.ended('rfc-4', { verified: true, delivered: true });
    expect(await cap.spentShare()).toBeCloseTo(0.9);
  });

  it('the refusal stands when the store cannot claim the announcement', async () => {
    const { cap, store, events } = make({ amount: 3 }, 300);
    await cap.reserve('sms');
    store.setIfAbsent = () => Promise.reject(new Error('store down'));
    expect((await refusalOf(cap.reserve('sms')))?.reason).toBe('spend_cap');
    expect(events).toStrictEqual([]);
  });
});

describe('warnWhenSpendUnbounded', () => {
  const warned = (limits: { spendCap: unknown; beforeStart?: unknown }, nodeEnv: string | undefined) => {
    const warnings: string[] = [];
    warnWhenSpendUnbounded(
      limits,
      { warn: (m: string) => void warnings.push(m), error: () => {} } as never,
      nodeEnv,
    );
    return warnings;
  };

  it('warns in production when neither a spend cap nor a beforeStart hook bounds spending', () => {
    expect(warned({ spendCap: false }, 'production')).toStrictEqual([
      expect.stringContaining('limits.spendCap is off and no limits.beforeStart hook is set'),
    ]);
    expect(warned({ spendCap: false }, 'development')).toStrictEqual([]);
    expect(warned({ spendCap: false }, undefined)).toStrictEqual([]);
    expect(warned({ spendCap: { amount: 100 } }, 'production')).toStrictEqual([]);
    expect(warned({ spendCap: false, beforeStart: () => undefined }, 'production')).toStrictEqual([]);
  });
});

describe('chargedAtEnd (issue 29: the cap counts what the API charges)', () => {
  it('proof-charged methods are charged only verified, delivery-charged ones only delivered, per-attempt ones always', () => {
    const ends = [
      { verified: false, delivered: false },
      { verified: false, delivered: true },
      { verified: true, delivered: true },
      // Verified before its delivery was told (a lost delivery webhook): the code went out all the same.
      { verified: true, delivered: false },
    ];
    expect(ends.map((end) => chargedAtEnd('on_verified', end))).toStrictEqual([false, false, true, true]);
    expect(ends.map((end) => chargedAtEnd('on_delivery', end))).toStrictEqual([false, true, true, true]);
    expect(ends.map((end) => chargedAtEnd('on_initiation', end))).toStrictEqual([true, true, true, true]);
  });
});
