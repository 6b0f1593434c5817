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
 * A number's wrong codes per day across every caller, in `wrongCodesPerNumber.points` (100 by default).
 * Past it a starter is still compared while its own wrong codes of the day are within `maxAttempts`
 * (its reserve, which no other starter spends), up to TEST_WRONG_CODES_HARD_FACTOR times it.
 */
export const TEST_WRONG_CODES_DAY_FACTOR = 10;

/**
 * The number's hard ceiling per day, in day ceilings (200 wrong codes by default): past it no code of
 * the number is compared, whoever checks, so guessing a fixed code from many starters stays bounded.
 */
export const TEST_WRONG_CODES_HARD_FACTOR = 2;

const DAY_MS = 86_400_000;

/** A wrong-code budget (or count) of a test number's check. */
interface WrongCodeBudget {
  key: string;
  points: number;
  windowMs: number;
}

/** Store key of a counter and its window. */
type WrongCodeCount = Omit<WrongCodeBudget, 'points'>;

/** The wrong-code budgets of a session's checks (see `takeWrongCodePoints`). */
export interface WrongCodeBudgets {
  /** Its starter's (per window) and its network's (an owner's session): each spent refuses. */
  own: WrongCodeBudget[];
  /** Its starter's wrong codes of the day, which decide its reserve past the number's day (absent: an old session). */
  starterDay?: WrongCodeCount;
  /** The number's day across every caller; past `points`, only a starter within `reserve` until `hard`. */
  number: WrongCodeBudget & { hard: number; reserve: number };
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
 * The wrong-code budgets a check of a session takes: its starter's (`wrongCodesPerNumber`, per owner,
 * else per network, so a stranger's wrong codes never spend the reviewer's), its network's when the
 * starter is an owner (TEST_WRONG_CODES_NETWORK_FACTOR times it), and the number's day across every caller
 * (TEST_WRONG_CODES_DAY_FACTOR times the points, with each starter's reserve of `maxAttempts` past it up
 * to TEST_WRONG_CODES_HARD_FACTOR times it).
 */
export function wrongCodeBudgets(
  keys: DataKeys,
  { points, windowMs }: RateLimit,
  maxAttempts: number,
  session: StarterTags & { phoneNumber: string },
): WrongCodeBudgets {
  const number = session.phoneNumber;
  const own: WrongCodeBudget[] = [];
  let starterDay: WrongCodeCount | undefined;
  // A session stored before starters were kept: the number's day alone, without a reserve.
  if (session.startedBy !== undefined) {
    own.push({ key: testNumberWrongKey(keys, `${number}|${session.startedBy}`), points, windowMs });
    starterDay = { key: testNumberWrongKey(keys, `${number}|${session.startedBy}|day`), windowMs: DAY_MS };
  }
  if (session.network !== undefined)
    own.push({
      key: testNumberWrongKey(keys, `${number}|${session.network}`),
      points: points * TEST_WRONG_CODES_NETWORK_FACTOR,
      windowMs,
    });
  const ceiling = points * TEST_WRONG_CODES_DAY_FACTOR;
  return {
    own,
    ...(starterDay === undefined ? {} : { starterDay }),
    number: {
      key: testNumberWrongKey(keys, number),
      points: ceiling,
      windowMs: DAY_MS,
      hard: ceiling * TEST_WRONG_CODES_HARD_FACTOR,
      reserve: maxAttempts,
    },
  };
}

/**
 * Takes a point of each budget in order, atomically (instances racing get distinct counts), stopping at
 * the first one spent: `spent` then, and no code may be compared. Past the number's day a check is
 * compared only within its starter's reserve (its own wrong codes of the day, this one included, at most
 * `reserve`) and the number's hard ceiling; a check refused there gives the number's point back, so only
 * compared codes count toward the hard ceiling. `giveBack` returns the points taken.
 */
export async function takeWrongCodePoints(
  store: VerificationStore,
  budgets: WrongCodeBudgets,
): Promise<{ spent: boolean; giveBack: () => Promise<void> }> {
  const taken: WrongCodeCount[] = [];
  const giveBack = async () => {
    for (const budget of taken) await store.increment(budget.key, -1, budget.windowMs);
  };
  const take = async (budget: WrongCodeCount) => {
    taken.push(budget);
    return (await store.increment(budget.key, 1, budget.windowMs)).value;
  };
  for (const budget of budgets.own)
    if ((await take(budget)) > budget.points) return { spent: true, giveBack };
  const starterDayCount = budgets.starterDay === undefined ? 0 : await take(budgets.starterDay);
  const { number } = budgets;
  const value = await take(number);
  if (value <= number.points) return { spent: false, giveBack };
  // A session without a starter (stored before starters were kept) has no reserve.
  const withinReserve = budgets.starterDay !== undefined && starterDayCount <= number.reserve;
  if (withinReserve && value <= number.hard) return { spent: false, giveBack };
  // Not compared: the number's point goes back (its hard ceiling counts compared codes only).
  taken.pop();
  await store.increment(number.key, -1, number.windowMs);
  return { spent: true, giveBack };
}

/** Store key of a test number's wrong codes (keyed digest of the number, or of the number and a starter). */
export function testNumberWrongKey(keys: DataKeys, subject: string): string {
  return `test-number:wrong:${keys.digest(subject)}`;
}
