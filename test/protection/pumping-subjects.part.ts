import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import {
  attempt,
  HOLD_MS,
  inRange,
  MINUTE,
  ownRange,
  pumpingHarness,
  verifiedEvent,
} from './pumping-harness.js';
import type { PumpingAttempt } from '../../src/pumping/pumping-defence.js';

/**
 * The pumping defence's subjects one start at a time: what a start is counted for (callers, a
 * journey's switch, the safe list), what a completed verification changes, and the stricter rules
 * while a country is under attack. (pumping-holds.part.ts: when and how a subject is held.)
 */

describe('PumpingDefence: subjects and counts', () => {
  const defence = pumpingHarness();

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

  it("a journey's switch counts for its number's place, not for any of its callers (owner, client key, network)", async () => {
    const { pumping, start } = defence({ callerMinStarts: 50 });
    const caller = { owner: 'u-1', clientKey: 'k-1', ip: '2001:db8:1:2::1' };
    const ids = ['owner:u-1', 'client:k-1', 'network:2001:db8:1:2::/64', 'range:+7926000', 'prefix:+7926'];
    const startsOf = async () => {
      const assessment = await pumping.assess(attempt('+79260000001', caller));
      return ids.map((id) => assessment?.counts.get(id)?.starts ?? 0);
    };
    expect(await start(attempt(ownRange(0), caller))).toBe('ok');
    const before = await startsOf();
    expect(await start(attempt(ownRange(0), { ...caller, switchedFrom: 'sms' }))).toBe('ok');
    const after = await startsOf();
    expect(after.slice(0, 3)).toStrictEqual(before.slice(0, 3));
    expect(after.slice(3)).toStrictEqual(before.slice(3).map((n) => n + 1));
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

  it('a caller past its share is judged as under attack itself; the places it starts in are not, so their other users go on', async () => {
    const { start, reported, clock } = defence({ callerMinStarts: 50, rangeMinStarts: 50 });
    // Eight unconverted paid starts of one client key: past a caller's share, its own twin short of the prior.
    for (let i = 0; i < 8; i++) expect(await start(attempt(ownRange(i), { clientKey: 'farm' }))).toBe('ok');
    clock.now += 15 * MINUTE;
    // A user's unconverted start in another prefix, then the farm's in the same prefix.
    expect(await start(attempt('+79851110000', { clientKey: 'user-y' }))).toBe('ok');
    const farm = (await start(attempt('+79851240000', { clientKey: 'farm' }))) as ProtectionRefusal;
    expect(farm.reason).toBe('client_held');
    expect(reported.events.map((e) => [e.subject, e.rule])).toStrictEqual([
      ['client', 'country_under_attack'],
    ]);
    // The prefix is judged as its country is (not under attack): another user of it is not held.
    expect(await start(attempt('+79851250000', { clientKey: 'user-x' }))).toBe('ok');
  });

  describe("a pool of addresses in one network past the network's share", () => {
    /**
     * A country whose traffic converts as a whole: an office's shared client key, past its own share
     * after five unconverted starts, whose next 120 starts all verify (counted in the country's volume
     * alone); then a pool of 16 addresses of 198.51.100.0/24, one unconverted start each (client key =
     * the address): each within its own share, the network past its share from the tenth.
     */
    async function officeAndPool(
      start: (a: PumpingAttempt) => Promise<unknown>,
      verify: (phone: string) => Promise<void>,
    ) {
      for (let i = 0; i < 125; i++) {
        expect(await start(attempt(ownRange(i), { clientKey: 'office' }))).toBe('ok');
        if (i >= 5) await verify(ownRange(i));
      }
      for (let i = 0; i < 16; i++)
        expect(
          await start(attempt(ownRange(200 + i), { clientKey: `198.51.100.${i}`, ip: `198.51.100.${i}` })),
        ).toBe('ok');
    }
    const settings = { callerMinStarts: 1000, rangeMinStarts: 1000, countryMinStarts: 1000 };

    // Kills the mutant of assess judging a start past its network's share by the volume twin.
    it("is judged by the starts its country's callers are bounded by, not by the office's converting volume: its address is held", async () => {
      const { pumping, start, sessionId, clock } = defence({ ...settings, underAttackMinStarts: 1 });
      await officeAndPool(start, (phone) => pumping.verified(verifiedEvent(sessionId(), phone)));
      clock.now += 15 * MINUTE;
      const a = attempt(ownRange(300), { clientKey: '198.51.100.0', ip: '198.51.100.0' });
      const held = (await start(a)) as ProtectionRefusal;
      expect(held.reason).toBe('client_held');
      // The office's key, past its own share, is judged by the volume it converts in: it goes on.
      expect(await start(attempt(ownRange(301), { clientKey: 'office' }))).toBe('ok');
    });

    // Kills the mutant of admit's re-check judging callers by `underAttack` alone (its own twin forgotten).
    it('a start of the pool counted concurrently with another of its address is held on the re-check', async () => {
      const { pumping, start, sessionId, clock } = defence({ ...settings, underAttackMinStarts: 2 });
      await officeAndPool(start, (phone) => pumping.verified(verifiedEvent(sessionId(), phone)));
      clock.now += 15 * MINUTE;
      const caller = { clientKey: '198.51.100.0', ip: '198.51.100.0' };
      // Both read one unconverted start of the address (under the two its judgement asks): the first
      // goes ahead; the second, counted after it, meets two and is held all the same.
      const first = await pumping.assess(attempt(ownRange(300), caller));
      const second = await pumping.assess(attempt(ownRange(301), caller));
      await expect(pumping.admit(first, false)).resolves.toBeDefined();
      const refused = await pumping.admit(second, false).then(
        () => 'ok',
        (error: unknown) => error,
      );
      expect((refused as ProtectionRefusal).reason).toBe('client_held');
    });
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
