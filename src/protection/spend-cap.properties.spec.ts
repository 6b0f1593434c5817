/**
 * The spend cap's relations, over any time offset and any order of starts and ends (fast-check):
 * a window's budget (n starts allowed, the (n+1)th refused until the window's real end, a
 * `Retry-After` equal to that wait), and its money (what is counted = what was reserved less what
 * was given back, never negative, never above the cap by more than one session's price).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import type { KnownVerificationMethod, Money } from '../api/api.types.js';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { methodTraits } from '../core/verification-method.js';
import { MemoryStore } from '../store/memory.store.js';
import type { PriceEstimator } from './price-estimator.js';
import { SpendEvidence } from './spend-evidence.js';
import { SpendCap } from './spend-cap.js';
import { refusalOf } from '../../test/support/spend-cap.fixture.js';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2026, 2, 1);

/** The API's billing table, as the spec states it (the oracle: not the code's own function). */
function charged(method: KnownVerificationMethod, end: { verified: boolean; delivered: boolean }): boolean {
  const billing = methodTraits(method).billing;
  if (billing === 'on_verified') return end.verified;
  if (billing === 'on_delivery') return end.delivered || end.verified;
  return true;
}

const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

function capOf(amount: number, estimateMinor: number, utcOffsetMinutes = 0, windowMs = DAY) {
  const clock = { now: START };
  const store = new MemoryStore({ clock: () => clock.now });
  stores.push(store);
  const events: unknown[] = [];
  const prices = {
    estimateMinor: async () => estimateMinor,
    learn: () => undefined,
  } as unknown as PriceEstimator;
  const settings = { amount, windowMs, currency: 'RUB', utcOffsetMinutes, worstCasePrice: 50 };
  const cap = new SpendCap(store, settings, prices, new SpendEvidence(store, undefined, settings), {
    logger: { warn: () => undefined, error: () => undefined },
    announce: (event) => void events.push(event),
  });
  return { cap, clock, events, store };
}

/** The end of the window holding `now`, computed on its own: the next midnight at the offset. */
function windowEnd(now: number, offsetMinutes: number, windowMs = DAY): number {
  const local = now + offsetMinutes * 60_000;
  return local - (local % windowMs) + windowMs - offsetMinutes * 60_000;
}

describe('SpendCap: a window holds n starts at any time offset', () => {
  it('n fit, the (n+1)th is refused with Retry-After = the real wait in seconds; a tick before the end still refused, at the end whole again', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: DAY - 1 }),
        fc.constantFrom(0, 180, -300, 330),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 50, max: 400 }),
        async (offsetMs, utcOffsetMinutes, n, price) => {
          // The cap is exactly n prices, plus less than one price: the (n+1)th never fits.
          const amountMinor = n * price + Math.floor(price / 2);
          const { cap, clock, events } = capOf(amountMinor / 100, price, utcOffsetMinutes);
          clock.now = START + offsetMs;
          for (let i = 0; i < n; i++) await cap.reserve('sms');
          const end = windowEnd(clock.now, utcOffsetMinutes);
          const refused = await refusalOf(cap.reserve('sms'));
          expect(refused?.reason).toBe('spend_cap');
          expect(refused?.retryAfterSeconds).toBe(Math.max(1, Math.ceil((end - clock.now) / 1000)));
          expect(events).toHaveLength(1);
          clock.now = end - 1;
          expect((await refusalOf(cap.reserve('sms')))?.retryAfterSeconds).toBe(1);
          expect(events).toHaveLength(1);
          clock.now = end;
          for (let i = 0; i < n; i++) expect(await refusalOf(cap.reserve('sms'))).toBeUndefined();
          expect((await refusalOf(cap.reserve('sms')))?.reason).toBe('spend_cap');
          expect(events).toHaveLength(2);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a start that lands exactly on the cap fits, for a method charged on proof too; a minor unit more does not', async () => {
    for (const method of ['sms', 'reverse_flash_call'] as const) {
      const exact = capOf(3, 100);
      for (let i = 0; i < 2; i++) await exact.cap.reserve('sms');
      expect(await refusalOf(exact.cap.reserve(method))).toBeUndefined();
      const over = capOf(2.99, 100);
      for (let i = 0; i < 2; i++) await over.cap.reserve('sms');
      expect((await refusalOf(over.cap.reserve(method)))?.reason).toBe('spend_cap');
    }
  });

  it('the last share kept: a start that ends exactly at 1 − keepShare of the cap fits, one past it is refused naming last_share', async () => {
    // 10.00 RUB, 1.00 a start, 30 % kept: 7 starts reach 70 % exactly.
    const { cap } = capOf(10, 100);
    for (let i = 0; i < 6; i++) await cap.reserve('sms');
    expect(await refusalOf(cap.reserve('sms', 0.3))).toBeUndefined();
    const refused = await refusalOf(cap.reserve('sms', 0.3));
    expect(refused?.extra).toMatchObject({ last_share: true });
    // The refused start took nothing: without a share kept, the rest of the cap is there.
    for (let i = 0; i < 3; i++) expect(await refusalOf(cap.reserve('sms'))).toBeUndefined();
    expect((await refusalOf(cap.reserve('sms')))?.reason).toBe('spend_cap');
  });
});

describe('SpendCap: the last share and the offset, for each kind of method', () => {
  it('a method charged on proof fits up to exactly 1 − keepShare of the cap, and not a minor unit past it', async () => {
    const { cap } = capOf(10, 100);
    for (let i = 0; i < 6; i++) await cap.reserve('sms');
    // 6.00 spent + 1.00 = 70 %: fits (and reserves nothing).
    expect(await refusalOf(cap.reserve('reverse_flash_call', 0.3))).toBeUndefined();
    await cap.reserve('sms');
    expect((await refusalOf(cap.reserve('reverse_flash_call', 0.3)))?.extra).toMatchObject({
      last_share: true,
    });
  });

  it('a deployment that changes utcOffsetMinutes starts on counters of its own, even where the day index is the same', async () => {
    const utc = capOf(3, 300);
    utc.clock.now = Date.UTC(2026, 2, 1, 10);
    await utc.cap.reserve('sms');
    expect((await refusalOf(utc.cap.reserve('sms')))?.reason).toBe('spend_cap');
    const settings = { amount: 3, windowMs: DAY, currency: 'RUB', utcOffsetMinutes: 180, worstCasePrice: 50 };
    const moscow = new SpendCap(
      utc.store,
      settings,
      { estimateMinor: async () => 300, learn: () => undefined } as unknown as PriceEstimator,
      new SpendEvidence(utc.store, undefined, settings),
      { logger: { warn: () => undefined, error: () => undefined }, announce: () => undefined },
    );
    // 10:00 UTC is 13:00 in Moscow: the same day either way, yet another window.
    expect(await moscow.spentShare()).toBe(0);
    expect(await refusalOf(moscow.reserve('sms'))).toBeUndefined();
  });
});

type Step =
  | { kind: 'start'; method: KnownVerificationMethod; realMinor: number | null; withSession: boolean }
  | { kind: 'end'; pick: number; verified: boolean; delivered: boolean }
  | { kind: 'wait'; ms: number };

const METHODS: KnownVerificationMethod[] = ['sms', 'flash_call', 'msgr1_otp', 'reverse_flash_call'];

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('start' as const),
    method: fc.constantFrom(...METHODS),
    realMinor: fc.option(fc.integer({ min: 0, max: 300 }), { nil: null }),
    withSession: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('end' as const),
    pick: fc.nat(),
    verified: fc.boolean(),
    delivered: fc.boolean(),
  }),
  fc.record({
    kind: fc.constant('wait' as const),
    ms: fc.constantFrom(1, 60_000, 50 * 60_000, 4 * HOUR, 23.5 * HOUR),
  }),
);

interface Started {
  requestId: string;
  method: KnownVerificationMethod;
  window: number;
  kept: number;
  expiresAt: number;
  ended: boolean;
}

describe('SpendCap: the money adds up', () => {
  it("for any starts, ends and waits: each window counts what was kept (a paid share stays until the API's usage says otherwise), in the window it was reserved in; never negative, never past the cap by more than one price", async () => {
    const price = 200;
    const cap = 20; // RUB
    const capMinor = cap * 100;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
        const made = capOf(cap, price);
        const { clock } = made;
        const counted = new Map<number, number>();
        const add = (window: number, minor: number) =>
          counted.set(window, (counted.get(window) ?? 0) + minor);
        const started: Started[] = [];
        let serial = 0;
        for (const step of steps) {
          const window = Math.floor(clock.now / DAY);
          if (step.kind === 'wait') clock.now += step.ms;
          else if (step.kind === 'start') {
            const onProof = methodTraits(step.method).chargedOnProof;
            let reservation;
            try {
              reservation = await made.cap.reserve(step.method);
            } catch (error) {
              if (!(error instanceof ProtectionRefusal)) throw error;
              // Refused only when its price would pass the cap.
              expect((counted.get(window) ?? 0) + price).toBeGreaterThan(capMinor);
              continue;
            }
            serial += 1;
            const requestId = `s-${serial}`;
            const expiresAt = clock.now + 300_000;
            const cost: Money | undefined =
              step.realMinor === null ? undefined : { amount: step.realMinor / 100, currency: 'RUB' };
            await reservation.settle(cost, step.withSession ? { requestId, expiresAt } : undefined);
            const kept = step.realMinor ?? price;
            // Charged on proof: nothing until it ends proved (without a session: counted at once).
            if (!onProof || !step.withSession) add(window, kept);
            if (step.withSession && methodTraits(step.method).billing !== 'on_initiation')
              started.push({ requestId, method: step.method, window, kept, expiresAt, ended: false });
          } else if (started.length > 0) {
            const session = started[step.pick % started.length]!;
            await made.cap.ended(session.requestId, { verified: step.verified, delivered: step.delivered });
            if (!session.ended && session.kept > 0 && clock.now < session.expiresAt + HOUR) {
              const paid = charged(session.method, step);
              // A paid method's share stays counted whatever the module saw: only the API's usage gives it back.
              if (methodTraits(session.method).chargedOnProof && paid) add(window, session.kept);
            }
            session.ended = true;
          }
          const now = counted.get(Math.floor(clock.now / DAY)) ?? 0;
          expect(Math.round((await made.cap.spentShare()) * capMinor)).toBe(Math.max(now, 0));
          expect(now).toBeGreaterThanOrEqual(0);
          // A start's estimate fits before it is settled: the real cost may pass it by one price.
          expect(now).toBeLessThanOrEqual(capMinor + 300);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('a proof a tick before its reservation is forgotten (an hour past its expiry) is counted; at that hour it is not', async () => {
    for (const [late, counted] of [
      [HOUR - 1, true],
      [HOUR, false],
    ] as const) {
      const { cap, clock } = capOf(10, 300);
      const expiresAt = clock.now + 600_000;
      const reservation = await cap.reserve('reverse_flash_call');
      await reservation.settle({ amount: 3, currency: 'RUB' }, { requestId: 'r', expiresAt });
      clock.now = expiresAt + late;
      await cap.ended('r', { verified: true, delivered: true });
      expect(await cap.spentShare()).toBeCloseTo(counted ? 0.3 : 0);
    }
  });

  it('an SMS whose delivery nobody saw stays counted whenever it ends: only the API says it cost nothing', async () => {
    for (const late of [0, HOUR - 1, HOUR]) {
      const { cap, clock } = capOf(10, 300);
      const expiresAt = clock.now + 600_000;
      await (await cap.reserve('sms')).settle({ amount: 3, currency: 'RUB' }, { requestId: 'r', expiresAt });
      clock.now = expiresAt + late;
      await cap.ended('r', { verified: false, delivered: false });
      expect(await cap.spentShare()).toBeCloseTo(0.3);
    }
  });
});
