import { describe, expect, it } from '@jest/globals';
import { isProbeStep } from '../core/fallback-moment.js';
import type { JourneyStep } from '../core/journey.js';
import { journeyVerifiedKey } from './figure-evidence.keys.js';
import { choiceCells } from './method-figures.js';
import type { VerificationStore } from '../store/verification-store.interface.js';
import { methodStatsSuite, rub } from '../../test/support/method-stats.fixture.js';

/*
 * MethodStats' outcomes: a failed end ranked like an expired one, steps left behind in the moment's
 * figures, a journey whose earlier step was never counted, the charges' currency, and what the logs
 * say of a batch the store refused.
 */

const fx = methodStatsSuite();
const { session } = fx;
const rfc = { method: 'reverse_flash_call', cost: rub(0.25), awaitingCode: false } as const;

/** Warnings logged by a MethodStats over `store` (the suite's unless given). */
function watched(store: VerificationStore = fx.store) {
  const warnings: { message: string; fields: unknown }[] = [];
  const log = fx.logger();
  log.warn = (message, fields) => void warnings.push({ message, fields });
  return { stats: fx.statsOn(store, { logger: log }), warnings };
}

/** A journey's reverse call and its flash call, started `startedAfterCall` ms after it (a probe of its moment). */
function callAndFlash(startedAfterCall: number) {
  const call = session(rfc);
  const probe = Array.from({ length: 200 }, (_, i) => `flash-${i}`).find((id) =>
    isProbeStep('flash_call', id),
  );
  const flash = session({
    requestId: probe!,
    method: 'flash_call',
    phoneNumber: call.phoneNumber,
    journeyId: call.requestId,
    createdAt: call.createdAt + startedAfterCall,
    cost: rub(0.8),
  });
  return { call, flash };
}

describe('MethodStats: unverified ends', () => {
  it('a failed end is ranked like an expired one: with evidence it ends a session, without it is unproven', async () => {
    const known = session(rfc);
    await fx.stats.tally(known, 'owner:v', 'mobile');
    await fx.stats.tally({ ...known, status: 'verified', verifiedAt: fx.now + 10_000 });
    // The same owner (a record now), failed: a real user's end.
    const vouched = session(rfc);
    await fx.stats.tally(vouched, 'owner:v', 'mobile');
    await fx.stats.tally({ ...vouched, status: 'failed' });
    // Seen first when it had failed already, with no evidence: its start and end counted together.
    await fx.stats.tally({ ...session(rfc), status: 'failed' }, 'client:x', 'mobile');

    expect((await fx.stats.learningSamples()).reverse_flash_call).toStrictEqual({
      started: 2,
      verified: 1,
      callers: 2,
    });
    // In the moment's figures the unproven one is started and left, never ended.
    expect(await fx.stats.timeToVerify('reverse_flash_call', '7', 'mobile', 7)).toMatchObject({
      started: 3,
      ended: 2,
      left: 1,
    });
    expect((await fx.stats.figures()).reverse_flash_call).toMatchObject({ started: 3, failed: 2 });
  });

  it('a step typed in the page, left behind by a journey another step verified: started and left in its moment figures', async () => {
    const probe = Array.from({ length: 200 }, (_, i) => `probe-${i}`).find((id) => isProbeStep('sms', id))!;
    const sms = session({ requestId: probe });
    await fx.stats.tally(sms, 'client:a', 'mobile');
    const call = session({ ...rfc, phoneNumber: sms.phoneNumber, journeyId: sms.requestId });
    await fx.stats.tally(call, 'client:a', 'mobile');
    await fx.stats.tally({ ...call, status: 'verified', verifiedAt: fx.now + 20_000 });
    await fx.stats.tally({ ...sms, status: 'expired' });
    expect(await fx.stats.timeToVerify('sms', '7', 'mobile', 7)).toMatchObject({
      started: 1,
      ended: 0,
      left: 1,
    });
  });

  // Twin orders of one journey: the flash call switched away from (its user failed it), or started after a
  // reverse call its user then placed late (the user was verified while it waited: no failure of its own).
  it.each([
    [
      'before the call that verified the journey: a failure, rescued',
      -16_000,
      { started: 1, verified: 0 },
      1,
    ],
    ['after the call that verified the journey: out of its ranking and its rescues', 16_000, undefined, 0],
  ])('a flash call started %s', async (_, startedAfterCall, samples, rescued) => {
    const { call, flash } = callAndFlash(startedAfterCall);
    const [first, second] = startedAfterCall > 0 ? [call, flash] : [flash, call];
    const step: JourneyStep = {
      requestId: first.requestId,
      method: first.method,
      startedAt: first.createdAt,
    };
    await fx.stats.tally(first, 'owner:u', 'mobile');
    await fx.stats.tally(second, 'owner:u', 'mobile', {}, [step]);
    await fx.stats.tally({ ...call, status: 'verified', verifiedAt: fx.now + 20_000 });
    await fx.stats.tally({ ...flash, status: 'expired', delivered: true });
    await fx.stats.flush();
    expect((await fx.stats.learningSamples()).flash_call).toStrictEqual(
      samples && { ...samples, callers: 1 },
    );
    const [cell] = await fx.stats.cellSums('flash_call', choiceCells(flash.phoneNumber, 'mobile'), 7);
    expect(cell).toMatchObject({ started: 1, expired: 1, rescued });
    // Either way it is left in its moment's figures: its user did not give up in its time.
    expect(await fx.stats.timeToVerify('flash_call', '7', 'mobile', 7)).toMatchObject({ ended: 0, left: 1 });
  });

  // The moment's figures of such a step, whichever came first: its end a failure (not an expiry), or the step
  // first seen at its end (its start counted then).
  it.each([
    ['before the call, failed', -16_000, 'failed', true],
    ['after the call, failed', 16_000, 'failed', true],
    ['before the call, first seen expired', -16_000, 'expired', false],
    ['after the call, first seen expired', 16_000, 'expired', false],
  ] as const)(
    'a flash call started %s, in a journey the call verified: started and left in its moment, never ended',
    async (_, startedAfterCall, end, seenAtStart) => {
      const { call, flash } = callAndFlash(startedAfterCall);
      await fx.stats.tally(call, 'owner:u', 'mobile');
      if (seenAtStart) await fx.stats.tally(flash, 'owner:u', 'mobile');
      await fx.stats.tally({ ...call, status: 'verified', verifiedAt: fx.now + 20_000 });
      await fx.stats.tally({ ...flash, status: end, delivered: true }, 'owner:u', 'mobile');
      expect(await fx.stats.timeToVerify('flash_call', '7', 'mobile', 7)).toMatchObject({
        started: 1,
        ended: 0,
        left: 1,
      });
    },
  );

  it('a journey an instance of an earlier version verified (its start not kept): a step ending unverified after it was failed by its method, rescued', async () => {
    const { call, flash } = callAndFlash(16_000);
    await fx.stats.tally(flash, 'owner:u', 'mobile');
    // What such an instance kept of the verified journey: '1', not the verifying step's start.
    await fx.store.set(journeyVerifiedKey(call), '1', 600_000);
    await fx.stats.tally({ ...flash, status: 'expired', delivered: true });
    expect((await fx.stats.learningSamples()).flash_call).toStrictEqual({
      started: 1,
      verified: 0,
      callers: 1,
    });
    const [cell] = await fx.stats.cellSums('flash_call', choiceCells(flash.phoneNumber, 'mobile'), 7);
    expect(cell).toMatchObject({ started: 1, expired: 1, rescued: 1, unproven: 0 });
  });

  // The journey's marker keeps the verifying step's start, not when it verified: on a clock that moves as it does
  // in a journey (the flash call 16 s after the call, the call verified at 20 s) the flash call is still the later start.
  it('a flash call started after the call, the call verified 4 s later on the clock: still out of its ranking and rescues', async () => {
    const { call, flash } = callAndFlash(16_000);
    await fx.stats.tally(call, 'owner:u', 'mobile');
    fx.now += 16_000;
    const step: JourneyStep = { requestId: call.requestId, method: call.method, startedAt: call.createdAt };
    await fx.stats.tally(flash, 'owner:u', 'mobile', {}, [step]);
    fx.now += 4_000;
    await fx.stats.tally({ ...call, status: 'verified', verifiedAt: fx.now });
    await fx.stats.tally({ ...flash, status: 'expired', delivered: true });
    await fx.stats.flush();
    expect((await fx.stats.learningSamples()).flash_call).toBeUndefined();
    const [cell] = await fx.stats.cellSums('flash_call', choiceCells(flash.phoneNumber, 'mobile'), 7);
    expect(cell).toMatchObject({ started: 1, expired: 1, rescued: 0 });
  });

  it('a journey whose earlier step was never counted (suspected) counts its verification, quietly', async () => {
    const { stats, warnings } = watched();
    const first = session({ ...rfc, suspected: true });
    await stats.tally(first, 'client:a', 'mobile');
    const step: JourneyStep = {
      requestId: first.requestId,
      method: first.method,
      startedAt: first.createdAt,
    };
    const next = session({ phoneNumber: first.phoneNumber, journeyId: first.requestId });
    await stats.tally(next, 'client:a', 'mobile', {}, [step]);
    await stats.tally({ ...next, status: 'verified', delivered: true, verifiedAt: fx.now + 30_000 });
    const figures = await stats.figures();
    expect(figures.sms).toMatchObject({ started: 1, delivered: 1, verified: 1 });
    expect(figures.reverse_flash_call).toBeUndefined();
    expect(warnings).toStrictEqual([]);
  });
});

describe('MethodStats: money and the logs', () => {
  it('charges in the account’s currency: RUB before anything was charged, then the last currency charged, kept by batches that charged nothing', async () => {
    const { stats, warnings } = watched();
    const free = async () => {
      await stats.tally(session({ cost: undefined }));
      await stats.flush();
    };
    await free();
    expect((await stats.figures()).sms!.charged).toStrictEqual(rub(0));
    await stats.tally(session({ method: 'msgr1_otp', cost: { amount: 0.05, currency: 'USD' } }));
    await stats.flush();
    await free();
    const figures = await stats.figures();
    expect(figures.msgr1_otp!.charged).toStrictEqual({ amount: 0.05, currency: 'USD' });
    expect(figures.sms).toMatchObject({ started: 2, charged: { amount: 0, currency: 'USD' } });
    expect(warnings).toStrictEqual([]);
  });

  it('a batch the store refuses is logged with how many counters it held and why', async () => {
    const down = new Proxy(fx.store, {
      get(target, property, receiver) {
        if (property === 'increment') return () => Promise.reject(new Error('store down'));
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const { stats, warnings } = watched(down);
    // Not a probe of the fallback moment (one id in PROBE_EVERY is, whatever the tests before it drew).
    const requestId = Array.from({ length: 50 }, (_, i) => `down-${i}`).find(
      (id) => !isProbeStep('msgr1_otp', id),
    )!;
    await stats.tally(session({ requestId, method: 'msgr1_otp', cost: rub(0.9) }));
    await stats.flush();
    // Started in its country and in all, charged in both, and started in its five cells.
    expect(warnings).toStrictEqual([
      {
        message: 'method figures: counts could not be added to the store',
        fields: { counters: 9, error: expect.stringContaining('store down') },
      },
    ]);
  });
});
