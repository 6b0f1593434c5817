import type { DataKeys } from '../core/data-keys.js';
import type { RateLimit } from '../options/verification.options.js';
import type { VerificationStore } from '../store/verification-store.interface.js';

/** Who starts a test session: the owner (owner(req)) and the client network (an IPv4 /24, an IPv6 /48). */
export interface TestStarter {
  owner?: string;
  network?: string;
  /** The owner is on `testNumbers.owners` (a named reviewer): its hard ceiling is its own. */
  listed?: boolean;
}

/** What a test session keeps of its starter (keyed digests): whose wrong-code budgets its checks take. */
export interface StarterTags {
  /** The owner, else the client network, else the host (a start with neither). */
  startedBy?: string;
  /** The client network, when the starter is an owner. */
  network?: string;
  /** Whose hard ceiling its compared codes count in: a listed owner, else its network's block (see `starterBlock`). */
  block?: string;
}

/**
 * A network's wrong codes of one number per window, in `wrongCodesPerNumber.points`: the owners behind
 * one network (an office, a carrier NAT) share it.
 */
export const TEST_WRONG_CODES_NETWORK_FACTOR = 3;

/**
 * A number's wrong codes per day across every caller, in `wrongCodesPerNumber.points` (100 by default).
 * Past it a starter is still compared while its own wrong codes of the day are within `maxAttempts`
 * (its reserve, which no other starter spends), up to its block's TEST_WRONG_CODES_HARD_FACTOR times it.
 */
export const TEST_WRONG_CODES_DAY_FACTOR = 10;

/**
 * The number's hard ceiling per day and block (see `starterBlock`), in day ceilings (200 compared
 * codes by default): past it no code of a starter of that block is compared, so guessing a fixed code
 * stays bounded per block, and strangers' networks never spend the hard ceiling of the reviewer's.
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
  /** Its starter's (per window): spent, it refuses. */
  own: WrongCodeBudget[];
  /** Its network's (an owner's session, per window): spent, it refuses a starter past its reserve of the window. */
  network?: WrongCodeBudget & { reserve: number };
  /** Its block's compared codes of the day (absent: an old session), held to the hard ceiling. */
  block?: WrongCodeCount;
  /** Its starter's wrong codes of the day, which decide its reserve past the number's day (absent: an old session). */
  starterDay?: WrongCodeCount;
  /** The number's day across every caller; past `points`, only a starter within `reserve` until `hard`. */
  number: WrongCodeBudget & { hard: number; reserve: number };
}

/** A session's starter tags, as its state keeps them. */
export function starterTags(keys: DataKeys, starter: TestStarter): StarterTags {
  const { owner, network } = starter;
  const by = owner !== undefined ? `owner:${owner}` : network !== undefined ? `network:${network}` : 'host';
  return {
    startedBy: keys.digest(by),
    ...(owner !== undefined && network !== undefined ? { network: keys.digest(`network:${network}`) } : {}),
    block: keys.digest(`block:${starterBlock(starter)}`),
  };
}

/**
 * Whose hard ceiling a starter's codes count in: an owner on `testNumbers.owners`, its own; else its
 * network's block (an IPv4 /16, an IPv6 /32: one provider's range); else the host (no address).
 */
export function starterBlock({ owner, network, listed }: TestStarter): string {
  if (listed === true && owner !== undefined) return `owner:${owner}`;
  if (network === undefined) return 'host';
  const v4 = /^(\d+)\.(\d+)\.\d+\.\d+\/24$/.exec(network);
  if (v4 !== null) return `${v4[1]}.${v4[2]}.0.0/16`;
  const v6 = /^([0-9a-f]*):([0-9a-f]*):/i.exec(network);
  return v6 === null ? network : `${v6[1]}:${v6[2]}::/32`;
}

/**
 * The wrong-code budgets a check of a session takes: its starter's (`wrongCodesPerNumber`, per owner,
 * else per network, so a stranger's wrong codes never spend the reviewer's), its network's when the
 * starter is an owner (TEST_WRONG_CODES_NETWORK_FACTOR times it, refusing only a starter past its reserve
 * of `maxAttempts`), and the number's day across every caller (TEST_WRONG_CODES_DAY_FACTOR times the
 * points, with each starter's reserve of `maxAttempts` past it up to its block's TEST_WRONG_CODES_HARD_FACTOR
 * times it).
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
  const network =
    session.network === undefined
      ? undefined
      : {
          key: testNumberWrongKey(keys, `${number}|${session.network}`),
          points: points * TEST_WRONG_CODES_NETWORK_FACTOR,
          windowMs,
          reserve: maxAttempts,
        };
  const block =
    session.block === undefined
      ? undefined
      : { key: testNumberWrongKey(keys, `${number}|${session.block}|block`), windowMs: DAY_MS };
  const ceiling = points * TEST_WRONG_CODES_DAY_FACTOR;
  return {
    own,
    ...(network === undefined ? {} : { network }),
    ...(block === undefined ? {} : { block }),
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
  let starterCount = 0;
  for (const budget of budgets.own)
    if ((starterCount = await take(budget)) > budget.points) return { spent: true, giveBack };
  // The network's budget refuses its spenders only: a starter within its reserve of the window (its
  // own wrong codes, this one included) is compared though the others of its network spent it.
  const { network } = budgets;
  if (network !== undefined && (await take(network)) > network.points && starterCount > network.reserve)
    return { spent: true, giveBack };
  const starterDayCount = budgets.starterDay === undefined ? 0 : await take(budgets.starterDay);
  const { number, block } = budgets;
  const value = await take(number);
  const blockCount = block === undefined ? 0 : await take(block);
  if (value <= number.points) return { spent: false, giveBack };
  // A session without a starter (stored before starters were kept) has no reserve.
  const withinReserve = budgets.starterDay !== undefined && starterDayCount <= number.reserve;
  const withinHard = block === undefined ? value <= number.hard : blockCount <= number.hard;
  if (withinReserve && withinHard) return { spent: false, giveBack };
  // Not compared: the number's and the block's points go back (the hard ceiling counts compared codes only).
  for (const count of block === undefined ? [number] : [block, number]) {
    taken.pop();
    await store.increment(count.key, -1, count.windowMs);
  }
  return { spent: true, giveBack };
}

/** Store key of a test number's wrong codes (keyed digest of the number, or of the number and a starter). */
export function testNumberWrongKey(keys: DataKeys, subject: string): string {
  return `test-number:wrong:${keys.digest(subject)}`;
}
