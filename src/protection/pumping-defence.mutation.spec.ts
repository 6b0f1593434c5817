import { afterEach, describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import type { FraudSuspectedEvent, VerificationEvent } from '../core/verification-events.js';
import { VERIFICATION_DEFAULTS, type ResolvedPumping } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';

/**
 * The pumping defence's decisions one start at a time, with small thresholds: which subject is held
 * and when, what the refusal and the report say, how a hold ends and comes back longer, and what a
 * completed verification changes. (pumping-defence.spec.ts holds its properties over random traffic.)
 */

const T0 = Date.UTC(2026, 0, 1);
const MINUTE = 60_000;
const HOLD_MS = 10 * MINUTE;

const attempt = (phoneNumber: string, extra: Partial<PumpingAttempt> = {}): PumpingAttempt => ({
  phoneNumber,
  owner: undefined,
  clientKey: undefined,
  ip: undefined,
  ...extra,
});

/** Numbers of one range (+7916123): `+7916123` and four digits. */
const inRange = (i: number) => `+7916123${String(i).padStart(4, '0')}`;
/** Numbers of as many ranges as asked, one number each. */
const ownRange = (i: number) => `+7926${String(i).padStart(3, '0')}0000`;

function verifiedEvent(requestId: string, phoneNumber: string, owner?: string): VerificationEvent {
  return {
    event: 'verification.verified',
    requestId,
    phoneNumber,
    method: 'sms',
    status: 'verified',
    verifiedAt: new Date(T0),
    expiresAt: null,
    owner,
    source: 'check',
    methodsTried: ['sms'],
    journeyCost: null,
  } as VerificationEvent;
}

describe('PumpingDefence, one start at a time', () => {
  const stores: MemoryStore[] = [];
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close()));
  });

  function defence(settings: Partial<ResolvedPumping> = {}, spentShare?: number) {
    const clock = { now: T0 };
    const store = new MemoryStore({ clock: () => clock.now });
    stores.push(store);
    const reported = {
      events: [] as FraudSuspectedEvent[],
      warnings: [] as { message: string; context: unknown }[],
      suspected: [] as string[],
      refusals: [] as string[],
    };
    const pumping = new PumpingDefence(
      store,
      {
        ...VERIFICATION_DEFAULTS.limits.pumping,
        rangeMinStarts: 3,
        // The fresh-range and prefix rules have their own cases below.
        freshRangeMinStarts: 100,
        prefixMinStarts: 100,
        freshPrefixMinStarts: 100,
        callerMinStarts: 3,
        countryMinStarts: 50,
        holdMs: HOLD_MS,
        maxHoldMs: 4 * HOLD_MS,
        ...settings,
      },
      64,
      {
        logger: {
          warn: (message: string, context?: unknown) => void reported.warnings.push({ message, context }),
          error: () => undefined,
        } as never,
        emit: (event) => void reported.events.push(event),
        fraudSuspected: (reason, mode) => void reported.suspected.push(`${reason}/${mode}`),
        refusal: (reason, mode) => void reported.refusals.push(`${reason}/${mode}`),
        ...(spentShare === undefined ? {} : { spentShare: async () => spentShare }),
      },
    );
    let sessions = 0;
    /** One start through the defence: 'ok' when admitted (and remembered as started), else the refusal. */
    const start = async (a: PumpingAttempt, challengePassed = false): Promise<'ok' | ProtectionRefusal> => {
      const assessment = await pumping.assess(a);
      try {
        await pumping.admit(assessment, challengePassed);
      } catch (error) {
        if (error instanceof ProtectionRefusal) return error;
        throw error;
      }
      await pumping.started(assessment, `req-${++sessions}`, clock.now + 5 * MINUTE);
      return 'ok';
    };
    return { pumping, clock, store, reported, start, sessionId: () => `req-${sessions}` };
  }

  it('holds a range after its minimum of unconverted starts from other numbers, and reports it once', async () => {
    const { start, reported } = defence();
    for (let i = 0; i < 3; i++) expect(await start(attempt(inRange(i)))).toBe('ok');
    const refused = await start(attempt(inRange(3), { owner: 'user-9' }));
    expect(refused).toBeInstanceOf(ProtectionRefusal);
    const refusal = refused as ProtectionRefusal;
    expect([refusal.reason, refusal.getStatus()]).toEqual(['range_held', 429]);
    // A range's wait is coarse (whole steps of the hold): it says nothing about one caller.
    expect(refusal.retryAfterSeconds).toBe(HOLD_MS / 1000);
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

  // Issue 29 rewrote this one: a held start used to count for its country only, so a held range's
  // window emptied while its attempts went on and let a start through at each boundary.
  it('a held attempt counts for every subject: the held range stays unconverted when its window rolls over', async () => {
    const { pumping, start, clock } = defence();
    for (let i = 0; i < 3; i++) await start(attempt(inRange(i)));
    for (let i = 3; i < 8; i++) await start(attempt(inRange(i)));
    const assessment = await pumping.assess(attempt(inRange(9)));
    expect(assessment?.counts.get('range:+7916123')?.starts).toBe(8);
    expect(assessment?.counts.get('country:RU')?.starts).toBe(8);
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

  it('a hold ends after its cool-off; a pattern that goes on gets one twice as long, up to the maximum', async () => {
    const { start, clock, reported } = defence({ maxHoldMs: 3 * HOLD_MS });
    for (let i = 0; i < 3; i++) await start(attempt(inRange(i)));
    await start(attempt(inRange(3)));
    clock.now += HOLD_MS;
    // The window still shows the range not converting: held again, twice as long.
    const again = (await start(attempt(inRange(5)))) as ProtectionRefusal;
    expect(again.retryAfterSeconds).toBe((2 * HOLD_MS) / 1000);
    clock.now += 2 * HOLD_MS;
    await start(attempt(inRange(6)));
    expect(reported.events.map((e) => e.holdMs)).toEqual([HOLD_MS, 2 * HOLD_MS, 3 * HOLD_MS]);
    expect(reported.events.map((e) => e.heldUntil)).toEqual([
      new Date(T0 + HOLD_MS),
      new Date(T0 + 3 * HOLD_MS),
      new Date(T0 + 6 * HOLD_MS),
    ]);
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
    const { pumping, start, sessionId } = defence();
    for (let i = 0; i < 3; i++) await start(attempt(ownRange(i), { owner: 'user-1' }));
    const refused = (await start(attempt(ownRange(3), { owner: 'user-1' }))) as ProtectionRefusal;
    expect(refused.reason).toBe('owner_held');
    expect(refused.retryAfterSeconds).toBe(HOLD_MS / 1000);
    expect(await start(attempt(ownRange(3), { owner: 'user-2' }))).toBe('ok');

    // Another owner who completes its verifications is never held.
    for (let i = 10; i < 20; i++) {
      expect(await start(attempt(ownRange(i), { owner: 'user-3' }))).toBe('ok');
      await pumping.verified(verifiedEvent(sessionId(), ownRange(i), 'user-3'));
    }
  });

  it("a journey's switch is judged as part of its journey: a held caller does not refuse it, and its verification credits the caller", async () => {
    const { pumping, start, sessionId } = defence();
    const caller = { clientKey: 'nat-1' };
    for (let i = 0; i < 3; i++) await start(attempt(ownRange(i), caller));
    expect(((await start(attempt(ownRange(3), caller))) as ProtectionRefusal).reason).toBe('client_held');
    // The switch of a journey this caller started goes ahead, and is not counted for the caller.
    expect(await start(attempt(ownRange(0), { ...caller, switchedFrom: 'sms' }))).toBe('ok');
    const before = await pumping.assess(attempt(ownRange(9), caller));
    expect(before?.counts.get('client:nat-1')?.starts).toBe(4);
    await pumping.verified(verifiedEvent(sessionId(), ownRange(0)));
    const after = await pumping.assess(attempt(ownRange(9), caller));
    expect(after?.counts.get('client:nat-1')?.verified).toBe(1);
  });

  it('a client key and, when it is not the address, the IPv6 /64 are callers of their own', async () => {
    const { start } = defence();
    for (let i = 0; i < 3; i++)
      await start(attempt(ownRange(i), { clientKey: 'session-a', ip: `2001:db8:1:2::${i}` }));
    // Same network, new client key: the /64 is held.
    const network = (await start(
      attempt(ownRange(3), { clientKey: 'session-b', ip: '2001:db8:1:2::ff' }),
    )) as ProtectionRefusal;
    expect(network.reason).toBe('client_held');
    // Same client key from another network: the key is held.
    const client = (await start(
      attempt(ownRange(4), { clientKey: 'session-a', ip: '2001:db8:9:9::1' }),
    )) as ProtectionRefusal;
    expect(client.reason).toBe('client_held');
    expect(await start(attempt(ownRange(5), { clientKey: 'session-c', ip: '2001:db8:9:9::1' }))).toBe('ok');
  });

  it('an address that is the client key is counted once', async () => {
    const { pumping } = defence();
    const assessment = await pumping.assess(
      attempt(ownRange(0), { clientKey: '203.0.113.7', ip: '203.0.113.7' }),
    );
    expect(assessment?.subjects.map((s) => s.id)).toEqual([
      'range:+7926000',
      'prefix:+7926',
      'country:RU',
      'client:203.0.113.7',
    ]);
    const v6 = await pumping.assess(
      attempt(ownRange(0), { owner: 'u', clientKey: 'k', ip: '2001:db8:1:2::1' }),
    );
    expect(v6?.subjects.map((s) => s.id)).toEqual([
      'range:+7926000',
      'prefix:+7926',
      'country:RU',
      'owner:u',
      'client:k',
      'network:2001:db8:1:2::/64',
    ]);
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

  it('off: assesses nothing, counts nothing', async () => {
    const { pumping, store } = defence({ mode: 'off' });
    expect(pumping.enabled).toBe(false);
    expect(await pumping.assess(attempt(inRange(0)))).toBeUndefined();
    await (await pumping.admit(undefined, false)).release();
    await pumping.verified(verifiedEvent('req-1', inRange(0)));
    expect(await store.queueSize('any')).toBe(0);
    expect(defence().pumping.enabled).toBe(true);
  });

  it('never assesses a number, range or owner on the safe list', async () => {
    const { pumping } = defence({
      safeList: { numbers: ['+79161230000'], ranges: ['+7926000'], owners: ['qa-bot'] },
    });
    expect(await pumping.assess(attempt('+79161230000'))).toBeUndefined();
    expect(await pumping.assess(attempt('+79260001234'))).toBeUndefined();
    expect(await pumping.assess(attempt('+79161231111', { owner: 'qa-bot' }))).toBeUndefined();
    expect(await pumping.assess(attempt('+79161231111'))).toBeDefined();
    const safeOwner = defence({ safeList: { numbers: [], ranges: [], owners: ['qa-bot'] } });
    expect(await safeOwner.pumping.assess(attempt('+79161231111', { owner: 'qa-bot' }))).toBeUndefined();
    expect(await safeOwner.pumping.assess(attempt('+79161231111', { owner: 'someone' }))).toBeDefined();
  });

  it('a verification without a remembered start counts for its range, prefix, country and owner; only the owner becomes known', async () => {
    const { pumping } = defence();
    await pumping.verified(verifiedEvent('unknown-req', '+79161234567', 'user-1'));
    await pumping.verified(verifiedEvent('again-req', '+79161234567', 'user-1'));
    const assessment = await pumping.assess(attempt('+79161230000', { owner: 'user-1' }));
    expect(assessment?.counts.get('range:+7916123')).toMatchObject({ verified: 1, known: false });
    expect(assessment?.counts.get('prefix:+7916')).toMatchObject({ verified: 1, known: false });
    expect(assessment?.counts.get('country:RU')).toMatchObject({ verified: 1, known: false });
    expect(assessment?.counts.get('owner:user-1')).toMatchObject({ verified: 1, known: true });
  });

  it('a number outside any country is counted under its calling code', async () => {
    const { pumping } = defence();
    const assessment = await pumping.assess(attempt('+80012345678'));
    expect(assessment?.country).toBe('+800');
    expect(assessment?.subjects[2]?.id).toBe('country:+800');
  });

  it('a released start is taken back from the counts', async () => {
    const { pumping } = defence();
    const assessment = await pumping.assess(attempt(inRange(0), { owner: 'user-1' }));
    const hold = await pumping.admit(assessment, false);
    await hold.release();
    const after = await pumping.assess(attempt(inRange(1), { owner: 'user-1' }));
    expect(after?.counts.get('range:+7916123')?.starts).toBe(0);
    expect(after?.counts.get('owner:user-1')?.starts).toBe(0);
  });

  describe('while a country is under attack', () => {
    /** A country whose traffic does not convert: 50 unconverted starts from as many ranges. */
    async function attack(start: (a: PumpingAttempt) => Promise<unknown>) {
      for (let i = 100; i < 150; i++) await start(attempt(ownRange(i)));
    }

    it('a range without a record is held at its first unconverted start; one with a record keeps the normal minimum', async () => {
      const { pumping, start, sessionId } = defence({ rangeMinStarts: 30, callerMinStarts: 30 });
      // A range that completed a verification earlier today.
      await start(attempt('+79031110000'));
      await pumping.verified(verifiedEvent(sessionId(), '+79031110000'));
      await attack(start);
      await start(attempt('+79051110000'));
      const held = (await start(attempt('+79051110001'))) as ProtectionRefusal;
      expect(held.reason).toBe('range_held');
      expect(await start(attempt('+79031110001'))).toBe('ok');
      expect(await start(attempt('+79031110002'))).toBe('ok');
    });

    it('near the spend cap, starts without a record wait for those with one (503 spend_cap_reserve)', async () => {
      const { pumping, start, sessionId, reported } = defence(
        { rangeMinStarts: 1000, callerMinStarts: 1000, underAttackMinStarts: 1000 },
        0.85,
      );
      await start(attempt('+79031110000', { owner: 'regular' }));
      await pumping.verified(verifiedEvent(sessionId(), '+79031110000', 'regular'));
      await attack(start);
      const reserve = (await start(attempt('+79051110000'))) as ProtectionRefusal;
      expect([reserve.reason, reserve.getStatus(), reserve.retryAfterSeconds]).toEqual([
        'spend_cap_reserve',
        503,
        HOLD_MS / 1000,
      ]);
      expect(reported.events.at(-1)).toMatchObject({
        reason: 'spend_cap_reserve',
        country: 'RU',
        countryUnderAttack: true,
        holdMs: HOLD_MS,
      });
      // Reported once per cool-off, however many starts wait.
      await start(attempt('+79051110001'));
      expect(reported.events.filter((e) => e.reason === 'spend_cap_reserve')).toHaveLength(1);
      // A caller with a record is served; a range is not vouched for by a verification in it.
      expect(await start(attempt('+79031110001', { owner: 'regular' }))).toBe('ok');
      expect(((await start(attempt('+79031110002'))) as ProtectionRefusal).reason).toBe('spend_cap_reserve');
    });

    it('below the reserve, or with no spend cap, starts without a record go on', async () => {
      const thresholds = { rangeMinStarts: 1000, callerMinStarts: 1000, underAttackMinStarts: 1000 };
      const below = defence(thresholds, 0.79);
      await attack(below.start);
      expect(await below.start(attempt('+79051110000'))).toBe('ok');
      const noCap = defence(thresholds);
      await attack(noCap.start);
      expect(await noCap.start(attempt('+79051110000'))).toBe('ok');
    });
  });
});
