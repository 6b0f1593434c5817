import { afterEach, expect } from '@jest/globals';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import type { FraudSuspectedEvent, VerificationEvent } from '../../src/core/verification-events.js';
import { VERIFICATION_DEFAULTS, type ResolvedPumping } from '../../src/options/verification.options.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import { PumpingDefence, type PumpingAttempt } from '../../src/pumping/pumping-defence.js';
import { RangeStats } from '../../src/pumping/range-stats.js';
import { SPEC_DATA_KEYS } from '../support/data-keys.js';

/**
 * A PumpingDefence on a MemoryStore and a hand-moved clock, with small thresholds, one start at a
 * time: the harness of the defence's unit specs (pumping-holds, pumping-subjects).
 */

export const T0 = Date.UTC(2026, 0, 1);
export const MINUTE = 60_000;
export const HOLD_MS = 10 * MINUTE;

export const attempt = (phoneNumber: string, extra: Partial<PumpingAttempt> = {}): PumpingAttempt => ({
  phoneNumber,
  owner: undefined,
  clientKey: undefined,
  ip: undefined,
  ...extra,
});

/** Numbers of one range (+7916123): `+7916123` and four digits. */
/** A caller of its own network: an address of the /24 `10.<i>.0`, starting an SMS. */
export const fromNetwork = (
  phoneNumber: string,
  i: number,
  extra: Partial<PumpingAttempt> = {},
): PumpingAttempt =>
  attempt(phoneNumber, { clientKey: `10.${i}.0.1`, ip: `10.${i}.0.1`, method: 'sms', ...extra });

/** A stranger in a prefix of its own (+7903): an attack's prefix hold does not reach it. */
export const stranger = (extra: Partial<PumpingAttempt> = {}): PumpingAttempt =>
  attempt('+79031230000', { clientKey: '203.0.113.9', ip: '203.0.113.9', method: 'sms', ...extra });

export const inRange = (i: number) => `+7916123${String(i).padStart(4, '0')}`;
/** Numbers of as many ranges as asked, one number each. */
export const ownRange = (i: number) => `+7926${String(i).padStart(3, '0')}0000`;

export function verifiedEvent(requestId: string, phoneNumber: string, owner?: string): VerificationEvent {
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

/** Registers the stores' cleanup (call at the top of a describe block); returns the factory of defences. */
export function pumpingHarness() {
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
    const pumpingSettings: ResolvedPumping = {
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
    };
    const pumping = new PumpingDefence(
      store,
      pumpingSettings,
      64,
      {
        logger: {
          warn: (message: string, context?: unknown) => void reported.warnings.push({ message, context }),
          error: () => undefined,
        } as never,
        announce: (event) => void reported.events.push(event),
        metrics: {
          fraudSuspected: (reason, mode) => void reported.suspected.push(`${reason}/${mode}`),
          pumpingRefusal: (reason, mode) => void reported.refusals.push(`${reason}/${mode}`),
        },
      },
      new RangeStats(store, pumpingSettings, SPEC_DATA_KEYS),
      spentShare === undefined ? undefined : { spentShare: async () => spentShare },
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
  return defence;
}

/**
 * The hold `attempt` meets lifts at `retryAfterSeconds` from now, to `step` seconds (the lift is
 * looked up in one-minute steps; a coarse answer is rounded up to five): read only (assess counts
 * nothing), it is still held a step before and not at that moment.
 */
export async function expectLiftsAt(
  pumping: PumpingDefence,
  clock: { now: number },
  a: PumpingAttempt,
  retryAfterSeconds: number,
  step: number,
): Promise<void> {
  const from = clock.now;

  clock.now = from + (retryAfterSeconds - step) * 1000;
  expect((await pumping.assess(a))?.held).toBeDefined();
  clock.now = from + retryAfterSeconds * 1000;
  expect((await pumping.assess(a))?.held).toBeUndefined();
  clock.now = from;
}
