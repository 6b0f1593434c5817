import type { DataKeys } from '../core/data-keys.js';
import type { RateLimit } from '../options/verification.options.js';
import type { VerificationStore } from '../store/verification-store.interface.js';

/** Who starts a test session: the owner (owner(req)) and the client network (an IPv4 /24, an IPv6 /48). */
export interface TestStarter {
  owner?: string;
  network?: string;
}

/** What a test session keeps of its starter (keyed digests): whose wrong-code budgets its checks take. */
export interface StarterTags {
  /** The owner, else the client network, else the host (a start with neither). */
  startedBy?: string;
  /** The client network, when the starter is an owner. */
  network?: string;
}

/**
 * A network's wrong codes of one number per window, in `wrongCodesPerNumber.points`: the owners behind
 * one network (an office, a carrier NAT) share it.
 */
export const TEST_WRONG_CODES_NETWORK_FACTOR = 3;

/**
 * A number's wrong codes per day across every caller, in `wrongCodesPerNumber.points` (100 by default):
 * guessing a fixed code from many owners or networks stays bounded.
 */
export const TEST_WRONG_CODES_DAY_FACTOR = 10;

const DAY_MS = 86_400_000;

/** A wrong-code budget of a test number's check. */
interface WrongCodeBudget {
  key: string;
  points: number;
  windowMs: number;
}

/** A session's starter tags, as its state keeps them. */
export function starterTags(keys: DataKeys, { owner, network }: TestStarter): StarterTags {
  const by = owner !== undefined ? `owner:${owner}` : network !== undefined ? `network:${network}` : 'host';
  return {
    startedBy: keys.digest(by),
    ...(owner !== undefined && network !== undefined ? { network: keys.digest(`network:${network}`) } : {}),
  };
}

/**
 * The wrong-code budgets a check of a session takes, in order: its starter's (`wrongCodesPerNumber`, per
 * owner, else per network, so a stranger's wrong codes never spend the reviewer's), its network's when
 * the starter is an owner (TEST_WRONG_CODES_NETWORK_FACTOR times it), and the number's day across every
 * caller (TEST_WRONG_CODES_DAY_FACTOR times the points a day).
 */
export function wrongCodeBudgets(
  keys: DataKeys,
  { points, windowMs }: RateLimit,
  session: StarterTags & { phoneNumber: string },
): WrongCodeBudget[] {
  const number = session.phoneNumber;
  const budgets: WrongCodeBudget[] = [];
  // A session stored before starters were kept: the number's day alone.
  if (session.startedBy !== undefined)
    budgets.push({ key: testNumberWrongKey(keys, `${number}|${session.startedBy}`), points, windowMs });
  if (session.network !== undefined)
    budgets.push({
      key: testNumberWrongKey(keys, `${number}|${session.network}`),
      points: points * TEST_WRONG_CODES_NETWORK_FACTOR,
      windowMs,
    });
  budgets.push({
    key: testNumberWrongKey(keys, number),
    points: points * TEST_WRONG_CODES_DAY_FACTOR,
    windowMs: DAY_MS,
  });
  return budgets;
}

/**
 * Takes a point of each budget in order, atomically (instances racing get distinct counts), stopping at
 * the first one spent: `spent` then, and no code may be compared. `giveBack` returns the points taken.
 */
export async function takeWrongCodePoints(
  store: VerificationStore,
  budgets: readonly WrongCodeBudget[],
): Promise<{ spent: boolean; giveBack: () => Promise<void> }> {
  const taken: WrongCodeBudget[] = [];
  let spent = false;
  for (const budget of budgets) {
    taken.push(budget);
    if ((await store.increment(budget.key, 1, budget.windowMs)).value > budget.points) {
      spent = true;
      break;
    }
  }
  return {
    spent,
    giveBack: async () => {
      for (const budget of taken) await store.increment(budget.key, -1, budget.windowMs);
    },
  };
}

/** Store key of a test number's wrong codes (keyed digest of the number, or of the number and a starter). */
export function testNumberWrongKey(keys: DataKeys, subject: string): string {
  return `test-number:wrong:${keys.digest(subject)}`;
}
