/**
 * What a start's other steps read of the defence's assessment (the protection facade): whether the start
 * is suspected (its session left out of the method figures), whether it may be refused on the reading
 * alone (before anything is reserved), its burst marks read with the request limits, and whether one of
 * its callers has a record (the spend cap's last share). Each at the threshold that flips it, in enforce,
 * monitor and off modes, with and without a spend cap.
 */
import { describe, expect, it } from '@jest/globals';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import {
  attempt,
  fromNetwork as from,
  inRange,
  MINUTE,
  ownRange,
  pumpingHarness,
  stranger,
  verifiedEvent,
} from '../../test/protection/pumping-harness.js';

/** The country's minimum of unconverted starts in the attack's shape. */
const COUNTRY_MIN = 5;

describe('PumpingDefence: what the facade reads of an assessment', () => {
  const defence = pumpingHarness();

  /** `n` unconverted starts into fresh ranges of +7926, each from a network of its own (within its share). */
  async function unconverted(start: ReturnType<typeof defence>['start'], n: number, first = 0) {
    for (let i = first; i < first + n; i++) await start(from(ownRange(i), i));
  }

  it('mode off, or a number on the safe list: no assessment, nothing suspected, nothing refused on its reading, no known caller', async () => {
    const off = defence({ mode: 'off' });
    for (let i = 0; i < 5; i++) expect(await off.start(from(inRange(i), 1))).toBe('ok');
    const none = await off.pumping.assess(from(inRange(5), 1));
    expect(none).toBeUndefined();
    expect(off.pumping.suspects(none)).toBe(false);
    expect(off.pumping.mayRefuseOnReading(none, false)).toBe(false);
    expect(off.pumping.knownCaller(none)).toBe(false);
    expect(off.pumping.signal(none)).toBeUndefined();

    // Enforce, the range held after its minimum (3): a safe-listed number of it is not read at all.
    const safe = defence({ safeList: { numbers: [inRange(9)], ranges: [], owners: [] } });
    for (let i = 0; i < 3; i++) await safe.start(from(inRange(i), 1));
    const held = await safe.pumping.assess(from(inRange(4), 1));
    expect(safe.pumping.suspects(held)).toBe(true);
    const listed = await safe.pumping.assess(from(inRange(9), 1));
    expect(listed).toBeUndefined();
    expect([safe.pumping.suspects(listed), safe.pumping.mayRefuseOnReading(listed, false)]).toEqual([
      false,
      false,
    ]);
    expect(await safe.start(from(inRange(9), 1))).toBe('ok');
  });

  it('a range at its minimum (3) of unconverted starts: the next start is suspected and refused on its reading; one below, neither', async () => {
    const { pumping, start } = defence();
    for (let i = 0; i < 2; i++) await start(from(inRange(i), i));
    const below = await pumping.assess(from(inRange(2), 2));
    expect([below!.held, below!.underAttack]).toEqual([undefined, false]);
    expect(pumping.suspects(below)).toBe(false);
    expect(pumping.mayRefuseOnReading(below, false)).toBe(false);
    expect(await start(from(inRange(2), 2))).toBe('ok');

    const at = await pumping.assess(from(inRange(3), 3));
    expect([at!.held?.kind, at!.underAttack, at!.steer]).toEqual(['range', false, false]);
    expect(pumping.suspects(at)).toBe(true);
    expect(pumping.mayRefuseOnReading(at, false)).toBe(true);
    // A passed challenge lifts the hold for this start: it is judged with the concurrent starts, not on its reading.
    expect(pumping.mayRefuseOnReading(at, true)).toBe(false);
    expect(((await start(from(inRange(3), 3))) as ProtectionRefusal).reason).toBe('range_held');
    expect(await start(from(inRange(4), 4), true)).toBe('ok');
  });

  it('monitor mode: a start the defence would hold goes ahead, suspected, and is never refused on its reading', async () => {
    const { pumping, start, reported } = defence({ mode: 'monitor' });
    for (let i = 0; i < 2; i++) await start(from(inRange(i), i));
    expect(pumping.suspects(await pumping.assess(from(inRange(2), 2)))).toBe(false);
    await start(from(inRange(2), 2));
    const at = await pumping.assess(from(inRange(3), 3));
    expect(at!.held?.kind).toBe('range');
    expect(pumping.suspects(at)).toBe(true);
    expect(pumping.mayRefuseOnReading(at, false)).toBe(false);
    expect(await start(from(inRange(3), 3))).toBe('ok');
    expect(reported.refusals).toEqual(['range_held/monitor']);
  });

  it('a country at its minimum of unconverted starts: a stranger nothing holds is suspected and, steered, refused on its reading; one below, neither', async () => {
    const { pumping, start } = defence({ countryMinStarts: COUNTRY_MIN });
    await unconverted(start, COUNTRY_MIN - 1);
    const below = await pumping.assess(stranger());
    expect([below!.underAttack, below!.held, below!.steer]).toEqual([false, undefined, false]);
    expect(pumping.suspects(below)).toBe(false);
    expect(pumping.mayRefuseOnReading(below, false)).toBe(false);

    await unconverted(start, 1, COUNTRY_MIN - 1);
    const at = await pumping.assess(stranger());
    expect([at!.underAttack, at!.held, at!.reserve, at!.steer]).toEqual([true, undefined, false, true]);
    expect(pumping.suspects(at)).toBe(true);
    expect(pumping.signal(at)).toBeUndefined();
    expect(pumping.mayRefuseOnReading(at, false)).toBe(true);
    expect(pumping.mayRefuseOnReading(at, true)).toBe(false);
    // Of a method charged on proof, it is not steered (without a spend cap, no reserve either): suspected only.
    const onProof = await pumping.assess(stranger({ method: 'reverse_flash_call' }));
    expect([onProof!.steer, onProof!.reserve]).toEqual([false, false]);
    expect(pumping.suspects(onProof)).toBe(true);
    expect(pumping.mayRefuseOnReading(onProof, false)).toBe(false);
  });

  it("near the spend cap (0.8 of it spent, the reserve 0.2), a stranger's start of a method charged on proof is refused on its reading by the reserve; at 0.79, not", async () => {
    for (const [spent, reserve] of [
      [0.79, false],
      [0.8, true],
    ] as const) {
      const { pumping, start } = defence({ countryMinStarts: COUNTRY_MIN }, spent);
      await unconverted(start, COUNTRY_MIN);
      const onProof = await pumping.assess(stranger({ method: 'reverse_flash_call' }));
      expect([onProof!.underAttack, onProof!.held, onProof!.steer, onProof!.reserve]).toEqual([
        true,
        undefined,
        false,
        reserve,
      ]);
      expect(pumping.mayRefuseOnReading(onProof, false)).toBe(reserve);
      expect(pumping.signal(onProof)?.reason).toBe(reserve ? 'spend_cap_reserve' : undefined);
    }
  });

  it('under the same attack in monitor mode, nothing is refused on its reading, a stranger is still suspected', async () => {
    const { pumping, start } = defence({ countryMinStarts: COUNTRY_MIN, mode: 'monitor' }, 0.9);
    await unconverted(start, COUNTRY_MIN);
    for (const method of ['sms', 'reverse_flash_call'] as const) {
      const at = await pumping.assess(stranger({ method }));
      expect(at!.underAttack).toBe(true);
      expect(pumping.suspects(at)).toBe(true);
      expect(pumping.mayRefuseOnReading(at, false)).toBe(false);
    }
    expect(await start(stranger())).toBe('ok');
  });

  it('a caller with a completed verification is known (its start under attack neither steered nor refused by the reserve); a stranger, a caller-less start and a number of a verified range are not', async () => {
    const { pumping, start, sessionId } = defence({ countryMinStarts: COUNTRY_MIN }, 0.9);
    const user = from('+79051110000', 200);
    await start(user);
    await pumping.verified(verifiedEvent(sessionId(), user.phoneNumber));
    // Before the attack the country converts: the user's next start is not suspected.
    const calm = await pumping.assess(from('+79051110001', 200));
    expect(pumping.knownCaller(calm)).toBe(true);
    expect(pumping.suspects(calm)).toBe(false);

    await unconverted(start, COUNTRY_MIN + 1);
    const known = await pumping.assess(from('+79051110002', 200));
    expect([known!.underAttack, known!.held, known!.steer, known!.reserve]).toEqual([
      true,
      undefined,
      false,
      false,
    ]);
    expect(pumping.knownCaller(known)).toBe(true);
    expect(pumping.suspects(known)).toBe(true);
    expect(pumping.mayRefuseOnReading(known, false)).toBe(false);
    expect(await start(from('+79051110002', 200))).toBe('ok');

    // Another address is a caller of its own: not known, nor is a stranger.
    const neighbour = await pumping.assess(
      from('+79051110003', 200, { clientKey: '10.200.0.2', ip: '10.200.0.2' }),
    );
    expect(pumping.knownCaller(neighbour)).toBe(false);
    expect(pumping.knownCaller(await pumping.assess(stranger()))).toBe(false);
    // No caller at all (no address, no owner): its range has a proof, and a range is no caller.
    const callerless = await pumping.assess(attempt('+79051110004', { method: 'sms' }));
    expect(callerless!.counts.get('range:+7905111')!.verified).toBe(1);
    expect(pumping.knownCaller(callerless)).toBe(false);
  });

  it('an owner with a completed verification is known wherever it starts from', async () => {
    const { pumping, start, sessionId } = defence();
    await start(from('+79051110000', 1, { owner: 'user-1' }));
    await pumping.verified(verifiedEvent(sessionId(), '+79051110000', 'user-1'));
    expect(pumping.knownCaller(await pumping.assess(from('+79261110000', 2, { owner: 'user-1' })))).toBe(
      true,
    );
    expect(pumping.knownCaller(await pumping.assess(from('+79261110000', 2, { owner: 'user-2' })))).toBe(
      false,
    );
  });

  it('a host keying its clients (limits.key): the address of a client with a record is known under another key', async () => {
    const { pumping, start, sessionId } = defence();
    const keyed = (key: string, ip: string, phoneNumber: string) =>
      attempt(phoneNumber, { clientKey: key, ip, method: 'sms' });
    await start(keyed('browser-1', '192.0.2.7', '+79051110000'));
    await pumping.verified(verifiedEvent(sessionId(), '+79051110000'));
    const sameAddress = await pumping.assess(keyed('browser-2', '192.0.2.7', '+79261110000'));
    expect(sameAddress!.counts.get('client:browser-2')!.known).toBe(false);
    expect(pumping.knownCaller(sameAddress)).toBe(true);
    expect(pumping.knownCaller(await pumping.assess(keyed('browser-1', '192.0.2.8', '+79261110000')))).toBe(
      true,
    );
    expect(pumping.knownCaller(await pumping.assess(keyed('browser-3', '192.0.2.8', '+79261110000')))).toBe(
      false,
    );
  });
});

describe('PumpingDefence: the burst marks read with the request limits', () => {
  const defence = pumpingHarness();

  it("a paid start's marks: its number goes first, its caller unseen in its range and prefix; counted, the number's next start is not first", async () => {
    const { pumping, clock } = defence();
    const a = from(inRange(1), 1);
    const assessment = (await pumping.assess(a))!;
    const marks = await pumping.mark(assessment);
    expect(marks).toMatchObject({ first: true, ids: new Set(['range:+7916123', 'prefix:+7916']) });
    await pumping.admit(assessment, false, undefined, marks);
    // Another caller, same number, same window: the number's count exists.
    const again = await pumping.mark((await pumping.assess(from(inRange(1), 2)))!);
    expect(again).toMatchObject({ first: false, ids: new Set() });
    // A number new in the range from the same caller: first, its caller already seen there.
    const next = await pumping.mark((await pumping.assess(from(inRange(2), 1)))!);
    expect(next).toMatchObject({ first: true, ids: new Set() });
    clock.now += 60 * MINUTE;
    expect(await pumping.mark((await pumping.assess(from(inRange(1), 2)))!)).toMatchObject({ first: true });
  });

  it('a start of a method charged on proof reads no marks (it is counted nowhere)', async () => {
    const { pumping } = defence();
    const free = (await pumping.assess(from(inRange(1), 1, { method: 'reverse_flash_call' })))!;
    expect(pumping.mark(free)).toBeUndefined();
    // Unknown and absent methods are paid ones.
    for (const [i, method] of (['whatsapp_otp', undefined] as const).entries())
      expect(await pumping.mark((await pumping.assess(from(inRange(2 + i), 1, { method })))!)).toMatchObject({
        first: true,
      });
  });
});
