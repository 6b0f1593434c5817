import type { Money } from '../../src/api/api.types.js';
import type { SpendCapReachedEvent } from '../../src/core/verification-events.js';
import { ProtectionRefusal } from '../../src/core/refusal-reason.js';
import { MemoryStore } from '../../src/store/memory.store.js';
import type { PriceEstimator } from '../../src/protection/price-estimator.js';
import { SpendCap, type SpendCapSettings } from '../../src/protection/spend-cap.js';
import { SpendEvidence } from '../../src/protection/spend-evidence.js';

/** The spend cap's unit specs: a cap over a MemoryStore on a clock they move, and the refusal a start meets. */
export const DAY = 86_400_000;
/** 2026-01-01T10:00:00Z. */
export const TEN_AM = Date.UTC(2026, 0, 1, 10);
export const rub = (amount: number): Money => ({ amount, currency: 'RUB' });

/**
 * A spend cap of `amount` RUB a day whose every start is estimated at `estimateMinor` kopecks, over a store
 * of its own or `shared` (another deployment's cap on the same store and clock).
 */
export function spendCap(
  settings: Partial<SpendCapSettings> = {},
  estimateMinor = 300,
  chargedOn?: (date: string) => Promise<number>,
  shared?: { store: MemoryStore; clock: { now: number } },
) {
  const clock = shared?.clock ?? { now: TEN_AM };
  const store = shared?.store ?? new MemoryStore({ clock: () => clock.now });
  const learned: [string, Money][] = [];
  const prices = {
    estimateMinor: async () => estimateMinor,
    learn: (method: string, cost: Money) => void learned.push([method, cost]),
  } as unknown as PriceEstimator;
  const events: SpendCapReachedEvent[] = [];
  const warnings: { message: string; context: unknown }[] = [];
  const capSettings = {
    amount: 10,
    windowMs: DAY,
    currency: 'RUB',
    utcOffsetMinutes: 0,
    worstCasePrice: 50,
    ...settings,
  };
  const usage = chargedOn && { read: async (date: string) => ({ chargedMinor: await chargedOn(date) }) };
  const cap = new SpendCap(store, capSettings, prices, new SpendEvidence(store, usage, capSettings), {
    logger: {
      warn: (message: string, context?: unknown) => void warnings.push({ message, context }),
      error: () => {},
    } as never,
    announce: (event) => void events.push(event),
  });
  return { cap, clock, store, learned, events, warnings };
}

export async function refusalOf(promise: Promise<unknown>): Promise<ProtectionRefusal | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    if (error instanceof ProtectionRefusal) return error;
    throw error;
  }
}
