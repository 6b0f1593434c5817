/**
 * The proof reserve inside the spend cap (proof-reserve.ts): a caller's share of the reserve is what
 * its proofs took of the reserve. A carrier NAT whose users proved reverse calls all day before the
 * cap reached its last share is not refused inside it for those earlier proofs; inside it, it takes
 * at most its share like anyone.
 */
import { afterEach, expect, it } from '@jest/globals';
import type { Money } from '../api/api.types.js';
import { ProtectionRefusal } from '../core/refusal-reason.js';
import { MemoryStore } from '../store/memory.store.js';
import type { PriceEstimator } from './price-estimator.js';
import { SpendEvidence } from './spend-evidence.js';
import { SpendCap } from './spend-cap.js';

const DAY = 86_400_000;
const rub = (amount: number): Money => ({ amount, currency: 'RUB' });
const stores: MemoryStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});

/**
 * A 10 RUB cap (its last 20 %, 2 RUB, the reserve: 0.20 RUB per caller); every start costs 0.10 RUB.
 * `slowMs`: the store's writes of callers' shares land that late (a remote store).
 */
function cap(slowMs = 0) {
  const now = Date.UTC(2026, 0, 1, 10);
  const store = new MemoryStore({ clock: () => now });
  stores.push(store);
  const increment = store.increment.bind(store);
  store.increment = async (key, ...rest) => {
    if (slowMs > 0 && key.includes('spend-caller')) await new Promise((r) => setTimeout(r, slowMs));
    return increment(key, ...rest);
  };
  const prices = { estimateMinor: async () => 10, learn: () => undefined } as unknown as PriceEstimator;
  const settings = { amount: 10, windowMs: DAY, currency: 'RUB', utcOffsetMinutes: 0, worstCasePrice: 50 };
  const spend = new SpendCap(store, settings, prices, new SpendEvidence(store, undefined, settings), {
    logger: { warn() {}, error() {} },
    announce: () => undefined,
  });
  let n = 0;
  /** One reverse call of `caller`, proved: true when admitted. */
  const prove = async (caller: string): Promise<boolean> => {
    const terms = { callers: [caller], known: false, reserveShare: 0.2 };
    try {
      const reservation = await spend.reserve('reverse_flash_call', 0, terms);
      n += 1;
      await reservation.settle(rub(0.1), { requestId: `r${n}`, expiresAt: now + 300_000 });
      await spend.ended(`r${n}`, { verified: true, delivered: true });
      return true;
    } catch (error) {
      if (error instanceof ProtectionRefusal) return false;
      throw error;
    }
  };
  return { spend, prove };
}

it('a network that proved 30 calls before the reserve still takes its share inside it, and no more', async () => {
  const { spend, prove } = cap();
  for (let i = 0; i < 30; i++) expect(await prove('nat')).toBe(true);
  for (let i = 0; i < 50; i++) await spend.reserve('sms');
  // 8 RUB spent: the next call of the network lands in the reserve, where it has its 0.20 RUB.
  expect(await spend.spentShare()).toBeCloseTo(0.8);
  const inside: boolean[] = [];
  for (let i = 0; i < 4; i++) inside.push(await prove('nat'));
  expect(inside).toStrictEqual([true, true, false, false]);
  // Another caller has its own share.
  expect(await prove('other')).toBe(true);
});

it('a proof ends only once its callers’ share is written: on a slow store the network still stops at its share', async () => {
  const { spend, prove } = cap(5);
  for (let i = 0; i < 80; i++) await spend.reserve('sms');
  const inside: boolean[] = [];
  for (let i = 0; i < 4; i++) inside.push(await prove('nat'));
  expect(inside).toStrictEqual([true, true, false, false]);
});

it('a proof deep in the reserve takes its own price of its caller’s share, not the reserve others spent before it', async () => {
  const { spend, prove } = cap();
  // 8.50 RUB spent by others: half a ruble into the reserve before the network's first call.
  for (let i = 0; i < 85; i++) await spend.reserve('sms');
  const inside: boolean[] = [];
  for (let i = 0; i < 3; i++) inside.push(await prove('nat'));
  // 0.10 RUB a call against its 0.20 RUB: two calls, then refused.
  expect(inside).toStrictEqual([true, true, false]);
});
