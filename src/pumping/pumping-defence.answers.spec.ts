/**
 * What the defence answers a start it suspects, and what it counts of it: a stranger steered to a
 * method charged on proof while its country is under attack (409 `method_held`, counted nowhere), a
 * held start graded or refused, the spend cap's reserve per country, and what a proof of a method
 * charged on proof credits. Enforce mode with grading, beside no method offered, a passed challenge,
 * monitor and off modes.
 */
import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { VERIFICATION_DEFAULTS, type ResolvedPumping } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';
import { PumpingDefence, type GradedAnswer, type PumpingAttempt } from './pumping-defence.js';
import { RangeStats } from './range-stats.js';
import {
  attempt,
  fromNetwork as from,
  HOLD_MS,
  inRange,
  MINUTE,
  ownRange,
  pumpingHarness,
  stranger,
  verifiedEvent,
} from '../../test/protection/pumping-harness.js';

const COUNTRY_MIN = 5;
const OFFERED: GradedAnswer = { proofCharged: false, offered: ['reverse_flash_call'] };

/** The refusal `admit` throws, or 'ok' when it lets the start go. */
async function answer(
  pumping: PumpingDefence,
  a: PumpingAttempt,
  grade?: GradedAnswer,
  challengePassed = false,
): Promise<'ok' | ProtectionRefusal> {
  try {
    await pumping.admit(await pumping.assess(a), challengePassed, grade);
    return 'ok';
  } catch (error) {
    if (error instanceof ProtectionRefusal) return error;
    throw error;
  }
}

const shape = (r: 'ok' | ProtectionRefusal) =>
  r === 'ok' ? r : { reason: r.reason, retryAfterSeconds: r.retryAfterSeconds, extra: r.extra };

describe('PumpingDefence: answers to a suspected start', () => {
  const defence = pumpingHarness();

  async function underAttack(settings: Partial<ResolvedPumping> = {}, spentShare?: number) {
    const made = defence({ countryMinStarts: COUNTRY_MIN, ...settings }, spentShare);
    for (let i = 0; i < COUNTRY_MIN; i++) await made.start(from(ownRange(i), i));
    return made;
  }

  it('a stranger steered while its country is under attack: 409 method_held naming the offered methods, counted nowhere, no vote cast', async () => {
    const { pumping, reported } = await underAttack();
    const country = async () => (await pumping.assess(stranger()))!.counts.get('country:RU')!;
    const before = await country();
    for (let i = 0; i < 4; i++) {
      const steered = await answer(
        pumping,
        stranger({ clientKey: `203.0.113.${i}`, ip: `203.0.113.${i}` }),
        OFFERED,
      );
      expect(shape(steered)).toEqual({
        reason: 'method_held',
        retryAfterSeconds: HOLD_MS / 1000,
        extra: { reason: 'method_held', offered_methods: ['reverse_flash_call'], held: 'range_held' },
      });
    }
    const after = await country();
    expect([after.starts, after.networksPast]).toEqual([before.starts, before.networksPast]);
    expect(reported.refusals).toEqual([]);
  });

  it('steered with no method charged on proof to offer, or with the challenge passed, the stranger goes ahead and is counted', async () => {
    const { pumping } = await underAttack();
    const starts = async () => (await pumping.assess(stranger()))!.counts.get('country:RU')!.starts;
    const before = await starts();
    expect(await answer(pumping, stranger(), { proofCharged: false, offered: [] })).toBe('ok');
    expect(
      await answer(pumping, stranger({ clientKey: '203.0.113.50', ip: '203.0.113.50' }), OFFERED, true),
    ).toBe('ok');
    expect(await answer(pumping, stranger({ clientKey: '203.0.113.51', ip: '203.0.113.51' }))).toBe('ok');
    expect(await starts()).toBe(before + 3);
  });

  it('a held start graded: 409 method_held naming the hold; of a method charged on proof it goes ahead; with nothing offered, 429', async () => {
    const { pumping, start, reported } = defence();
    for (let i = 0; i < 3; i++) await start(from(inRange(i), i));
    const plain = await answer(pumping, from(inRange(3), 3));
    expect((plain as ProtectionRefusal).reason).toBe('range_held');
    const graded = await answer(pumping, from(inRange(4), 4), OFFERED);
    expect(shape(graded)).toMatchObject({
      reason: 'method_held',
      extra: { reason: 'method_held', offered_methods: ['reverse_flash_call'], held: 'range_held' },
    });
    // The range's wait (coarse, each refused attempt pushing it on), not the plain cool-off.
    const wait = (graded as ProtectionRefusal).retryAfterSeconds!;
    expect([wait > (plain as ProtectionRefusal).retryAfterSeconds!, wait % 300]).toEqual([true, 0]);
    expect(
      (
        (await answer(pumping, from(inRange(5), 5), {
          proofCharged: false,
          offered: [],
        })) as ProtectionRefusal
      ).reason,
    ).toBe('range_held');
    const onProof = from(inRange(6), 6, { method: 'reverse_flash_call' });
    expect(await answer(pumping, onProof, { proofCharged: true, offered: ['reverse_flash_call'] })).toBe(
      'ok',
    );
    // Each was refused by the hold (the one let through on proof too): counted in the refusals' metric.
    expect(reported.refusals).toEqual(Array(4).fill('range_held/enforce'));
    // What it hands back, released when a later step refuses the start: nothing was counted, nothing taken back.
    const starts = async () =>
      (await pumping.assess(from(inRange(9), 9)))!.counts.get('range:+7916123')!.starts;
    const before = await starts();
    const hold = await pumping.admit(
      await pumping.assess(from(inRange(7), 7, { method: 'reverse_flash_call' })),
      false,
      {
        proofCharged: true,
        offered: ['reverse_flash_call'],
      },
    );
    await hold.release();
    expect(await starts()).toBe(before);
  });

  it("a paid start's hold, released when a later step refuses it, takes its count back", async () => {
    const { pumping } = defence();
    const starts = async () =>
      (await pumping.assess(from(inRange(9), 9)))!.counts.get('range:+7916123')!.starts;
    const hold = await pumping.admit(await pumping.assess(from(inRange(1), 1)), false);
    expect(await starts()).toBe(1);
    await hold.release();
    expect(await starts()).toBe(0);
  });

  it('under attack, a start its prefix holds is answered by the hold, graded, not steered', async () => {
    const { pumping, reported } = await underAttack();
    const inPrefix = from('+79269990000', 99);
    expect((await pumping.assess(inPrefix))!.held?.kind).toBe('prefix');
    const refused = await answer(pumping, inPrefix, OFFERED);
    expect(shape(refused)).toMatchObject({ reason: 'method_held', extra: { held: 'range_held' } });
    expect(reported.refusals.at(-1)).toBe('range_held/enforce');
  });

  it('under attack, a stranger whose own unconverted start meets the lowered minimum (1) is held by its caller, graded as such, not steered', async () => {
    const { pumping, start } = await underAttack();
    const first = stranger({ phoneNumber: '+79031230001' });
    expect((await pumping.assess(first))!.held).toBeUndefined();
    expect(await start(first)).toBe('ok');
    // Its next start, a number of another prefix (its first's range and prefix are held too).
    const elsewhere = stranger({ phoneNumber: '+79051230000' });
    const again = await pumping.assess(elsewhere);
    expect([again!.held?.kind, again!.steer]).toEqual(['client', false]);
    expect(shape(await answer(pumping, elsewhere, OFFERED))).toMatchObject({
      reason: 'method_held',
      extra: { held: 'client_held' },
    });
    // In normal times its caller takes the normal minimum (3): a second start of its own goes ahead.
    const calm = defence();
    await calm.start(first);
    expect(await answer(calm.pumping, elsewhere, OFFERED)).toBe('ok');
  });

  it("past its own share, a caller is judged under attack, the ranges it starts into by their country: its own lot holds it, not another's unconverted start in the range", async () => {
    const { pumping, start, clock } = defence({ rangeMinStarts: 100, callerMinStarts: 100 });
    const own = (phoneNumber: string) =>
      attempt(phoneNumber, { clientKey: '192.0.2.7', ip: '192.0.2.7', method: 'sms' });
    // Another caller's one unconverted start in the range +7905123 (the lowered minimum, 1).
    await start(from('+79051230001', 5));
    for (let i = 0; i < 6; i++) await start(own(ownRange(i)));
    clock.now += 11 * MINUTE;
    const past = (await pumping.assess(own('+79051230002')))!;
    expect([past.underAttack, past.selfUnderAttack, past.held?.kind]).toEqual([false, true, 'client']);
    // Another caller within its share, into the same range: nothing holds it.
    expect((await pumping.assess(from('+79051230003', 6)))!.held).toBeUndefined();
  });

  it('two starts read together one below the range minimum (3): the first counted goes ahead, the second is held by the re-check', async () => {
    const { pumping, start } = defence();
    for (let i = 0; i < 2; i++) await start(from(inRange(i), i));
    const [a, b] = [from(inRange(2), 2), from(inRange(3), 3)];
    const [first, second] = await Promise.all([pumping.assess(a), pumping.assess(b)]);
    expect([first!.held, second!.held]).toEqual([undefined, undefined]);
    await pumping.admit(first, false);
    const refused = await pumping.admit(second, false).catch((error: unknown) => error);
    expect((refused as ProtectionRefusal).reason).toBe('range_held');
    // Read one at a time, the same two: the second is held on its reading.
    const apart = defence();
    for (let i = 0; i < 2; i++) await apart.start(from(inRange(i), i));
    expect(await apart.start(a)).toBe('ok');
    expect((await apart.pumping.assess(b))!.held?.kind).toBe('range');
  });

  it("the spend cap's reserve is held and reported once per country: Russia's, then Germany's", async () => {
    const { pumping, start, reported } = await underAttack({}, 0.9);
    // Germany's starts go ahead (each in a range of its own): refused attempts would not count for it.
    for (let i = 0; i < COUNTRY_MIN; i++) await start(from(`+49151${i}2345000`, 100 + i));
    const free = { method: 'reverse_flash_call' } as const;
    const events = reported.events.length;
    for (const phoneNumber of ['+79031230000', '+79031230001', '+4917612340000', '+4917612340001']) {
      const refused = await answer(pumping, stranger({ phoneNumber, ...free }));
      expect((refused as ProtectionRefusal).reason).toBe('spend_cap_reserve');
    }
    expect(reported.events.slice(events).map((e) => [e.reason, e.country])).toEqual([
      ['spend_cap_reserve', 'RU'],
      ['spend_cap_reserve', 'DE'],
    ]);
  });
});

describe('PumpingDefence: what a proof credits and gives back', () => {
  const defence = pumpingHarness();
  const proved = (requestId: string, phoneNumber: string, method = 'sms') => ({
    ...verifiedEvent(requestId, phoneNumber),
    method,
  });

  it("a stranger's proof by a method charged on proof credits nothing; a paid start's proof credits its range and country", async () => {
    const { pumping, start, sessionId } = defence();
    const free = from(inRange(1), 1, { method: 'reverse_flash_call' });
    await start(free);
    await pumping.verified(proved(sessionId(), free.phoneNumber, 'reverse_flash_call'));
    // Without a session either (its start never reached the defence): nothing.
    await pumping.verified(proved('req-unknown', inRange(2), 'reverse_flash_call'));
    const read = async () => {
      const counts = (await pumping.assess(from(inRange(9), 9)))!.counts;
      return [counts.get('range:+7916123')!.verified, counts.get('country:RU')!.verified];
    };
    expect(await read()).toEqual([0, 0]);
    const paid = from(inRange(3), 3);
    await start(paid);
    await pumping.verified(proved(sessionId(), paid.phoneNumber));
    expect(await read()).toEqual([1, 1]);
  });

  /** How many paid starts into fresh ranges the address 192.0.2.7 makes within its share (5) before one is past it. */
  async function withinShare(pumping: PumpingDefence, start: (a: PumpingAttempt) => Promise<unknown>) {
    for (let n = 0; n < 30; n++) {
      const next = address(ownRange(n));
      if ((await pumping.assess(next))!.standing !== 'within') return n;
      await start(next);
    }
    throw new Error('never past its share');
  }
  const address = (phoneNumber: string, method = 'sms') =>
    attempt(phoneNumber, { clientKey: '192.0.2.7', ip: '192.0.2.7', method });
  const lenient = { rangeMinStarts: 100, callerMinStarts: 100 };

  it("each proof of a paid start gives back one start over the country's prior to its address's share: 4 proofs at 0.8, one start more; at 0.5, four", async () => {
    for (const [prior, within] of [
      [0.8, 6],
      [0.5, 9],
    ] as const) {
      const { pumping, start, sessionId } = defence({
        ...lenient,
        expectedConversion: { RU: prior, default: 0.8 },
      });
      for (let i = 0; i < 4; i++) {
        await start(address(`+7906111000${i}`));
        await pumping.verified(proved(sessionId(), `+7906111000${i}`));
      }
      expect(await withinShare(pumping, start)).toBe(within);
    }
    // Without proofs: its share, 5.
    const none = defence(lenient);
    expect(await withinShare(none.pumping, none.start)).toBe(5);
  });

  it("a known caller's proofs of a method charged on proof credit its places but give nothing back to its share (they were never charged)", async () => {
    const { pumping, start, sessionId } = defence(lenient);
    await start(address('+79051110000'));
    await pumping.verified(proved(sessionId(), '+79051110000'));
    for (let i = 0; i < 4; i++) {
      await start(address(`+7906111000${i}`, 'reverse_flash_call'));
      await pumping.verified(proved(sessionId(), `+7906111000${i}`, 'reverse_flash_call'));
    }
    const counts = (await pumping.assess(from('+79061119999', 9)))!.counts;
    expect(counts.get('range:+7906111')!.verified).toBe(4);
    // The one paid proof gave back 125 of its 100: five starts within the share of 500, not more.
    expect(await withinShare(pumping, start)).toBe(5);
  });

  it('mode off counts no start and no proof: a defence enforcing later on the same store starts from nothing', async () => {
    const store = new MemoryStore({ clock: () => Date.UTC(2026, 0, 1) });
    const make = (mode: ResolvedPumping['mode']) => {
      const settings = { ...VERIFICATION_DEFAULTS.limits.pumping, mode };
      const quiet = { warn: () => undefined, error: () => undefined };
      const report = {
        logger: quiet,
        announce: () => undefined,
        metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
      };
      return new PumpingDefence(store, settings, 64, report, new RangeStats(store, settings, SPEC_DATA_KEYS));
    };
    try {
      const off = make('off');
      for (let i = 0; i < 3; i++) {
        const a = from(inRange(i), i);
        const assessment = await off.assess(a);
        await off.admit(assessment, false);
        await off.started(assessment, `req-${i}`, Date.UTC(2026, 0, 1, 0, 5));
        await off.verified(proved(`req-${i}`, a.phoneNumber));
      }
      const counts = (await make('enforce').assess(from(inRange(9), 9)))!.counts;
      expect(counts.get('range:+7916123')).toMatchObject({ starts: 0, verified: 0 });
      expect(counts.get('country:RU')).toMatchObject({ starts: 0, verified: 0 });
    } finally {
      await store.close();
    }
  });
});
