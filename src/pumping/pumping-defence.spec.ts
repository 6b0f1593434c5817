import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { PumpingDefence, type PumpingAttempt } from './pumping-defence.js';
import { RangeStats } from './range-stats.js';
import { VERIFICATION_DEFAULTS } from '../options/verification.options.js';
import { MemoryStore } from '../store/memory.store.js';
import { VerificationClientError } from '../core/verification.errors.js';
import { SPEC_DATA_KEYS } from '../../test/support/data-keys.js';

/**
 * Issue 20's pumping defence as properties, with its default thresholds, on a MemoryStore and a
 * clock the property moves: legitimate traffic across random ranges is never held, whatever its
 * pace and however many users abandon; an attack concentrated on a few ranges is held within a
 * bounded number of starts, however many addresses and owners it spreads over.
 */

const quiet = { warn: () => undefined, error: () => undefined };

function defence(): { pumping: PumpingDefence; clock: { now: number }; store: MemoryStore } {
  const clock = { now: Date.UTC(2026, 0, 1) };
  const store = new MemoryStore({ clock: () => clock.now });
  const settings = { ...VERIFICATION_DEFAULTS.limits.pumping };
  const pumping = new PumpingDefence(
    store,
    settings,
    64,
    {
      logger: quiet,
      announce: () => undefined,
      metrics: { fraudSuspected: () => undefined, pumpingRefusal: () => undefined },
    },
    new RangeStats(store, settings, SPEC_DATA_KEYS),
  );
  return { pumping, clock, store };
}

/** Runs one start through the defence; true when it was let through. Completes it when `completes`. */
async function startOnce(
  pumping: PumpingDefence,
  attempt: PumpingAttempt,
  requestId: string,
  completes: boolean,
): Promise<boolean> {
  const assessment = await pumping.assess(attempt);
  try {
    await pumping.admit(assessment, false);
  } catch (error) {
    if (error instanceof VerificationClientError) return false;
    throw error;
  }
  await pumping.started(assessment, requestId, Date.now() + 300_000);
  if (completes)
    await pumping.verified({
      event: 'verification.verified',
      verificationId: `vid-${requestId}`,
      requestId,
      phoneNumber: attempt.phoneNumber,
      method: 'sms',
      status: 'verified',
      verifiedAt: new Date(),
      expiresAt: null,
      owner: attempt.owner,
      source: 'check',
      methodsTried: ['sms'],
      journeyCost: null,
    });
  return true;
}

/** A random Russian mobile number: +79 and nine digits (ranges of 10,000 numbers at the default 4 digits). */
const mobileNumber = fc.integer({ min: 0, max: 999_999_999 }).map((n) => `+79${String(n).padStart(9, '0')}`);

describe('pumping defence properties', () => {
  it('legitimate traffic across random ranges is never held (up to 300 users an hour, up to 40 % of each range abandoning)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            phone: mobileNumber,
            abandons: fc.boolean(),
            gapMs: fc.integer({ min: 0, max: 60_000 }),
          }),
          {
            minLength: 1,
            maxLength: 300,
          },
        ),
        fc.double({ min: 0, max: 0.4, noNaN: true }),
        async (users, abandonShare) => {
          const { pumping, clock, store } = defence();
          try {
            // Per range (rangeDigits 4): started, abandoned.
            const ranges = new Map<string, [number, number]>();
            for (const [i, user] of users.entries()) {
              clock.now += user.gapMs;
              // At most the given share of a range's users abandons (what a host with real users sees;
              // three fresh numbers of a fresh range all abandoned is the fresh_burst rule's pattern).
              const [started, abandoned] = ranges.get(user.phone.slice(0, -4)) ?? [0, 0];
              const abandons = user.abandons && abandoned < abandonShare * (started + 1);
              ranges.set(user.phone.slice(0, -4), [started + 1, abandoned + (abandons ? 1 : 0)]);
              const attempt = {
                phoneNumber: user.phone,
                owner: `user-${i}`,
                clientKey: `10.1.${i >> 8}.${i & 255}`,
                ip: undefined,
              };
              expect(await startOnce(pumping, attempt, `req-${i}`, !abandons)).toBe(true);
            }
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('an attack concentrated on 1 to 5 ranges is held within 20 numbers per range, over any number of addresses and owners', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        async (rangeCount, addresses, owners, seed) => {
          const { pumping, clock, store } = defence();
          try {
            let state = seed;
            const next = (n: number): number => {
              state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
              return state % n;
            };
            // Ranges count numbers (a number started twice is the per-number limits' business).
            const served = new Set<string>();
            for (let i = 0; i < 200; i++) {
              clock.now += 1000;
              const attempt = {
                phoneNumber: `+7926${String(100 + next(rangeCount)).padStart(3, '0')}${String(next(10_000)).padStart(4, '0')}`,
                owner: `bot-${next(owners)}`,
                clientKey: `10.9.${next(addresses) >> 8}.${next(addresses) & 255}`,
                ip: undefined,
              };
              if (await startOnce(pumping, attempt, `bot-${i}`, false)) served.add(attempt.phoneNumber);
            }
            expect(served.size).toBeLessThanOrEqual(20 * rangeCount);
          } finally {
            await store.close();
          }
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe("pumping defence: a journey's switches", () => {
  it('are charged to no giver: an address whose four journeys each switched is still within its share (5) at its fifth start', async () => {
    const { pumping, store } = defence();
    const from = (i: number): PumpingAttempt => ({
      phoneNumber: `+7916555${String(i).padStart(4, '0')}`,
      owner: undefined,
      clientKey: '192.0.2.7',
      ip: '192.0.2.7',
      method: 'sms',
    });
    for (let i = 0; i < 4; i++) {
      await startOnce(pumping, from(i), `r${i}`, false);
      await startOnce(pumping, { ...from(i), method: 'flash_call', switchedFrom: 'sms' }, `s${i}`, false);
    }
    expect((await pumping.assess(from(10)))!.standing).toBe('within');
    // Its starts themselves are: four more, and the next is past its share.
    for (let i = 4; i < 8; i++) await startOnce(pumping, from(i), `r${i}`, false);
    expect((await pumping.assess(from(10)))!.standing).not.toBe('within');
    await store.close();
  });
});
