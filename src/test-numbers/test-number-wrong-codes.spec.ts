/**
 * A test number's wrong codes past its day's ceiling, weighed by who gives them: a starter whose own
 * wrong codes of the day are within `maxAttempts` (its reserve) is still compared, one who spent the
 * ceiling is not, and past the hard ceiling (counting compared codes only) nobody is. Each bound at its
 * value, one before and one after, on the store's clock.
 */
import { describe, expect, it } from '@jest/globals';
import { resolveVerificationOptions } from '../options/verification-options.resolver.js';
import { MemoryStore } from '../store/memory.store.js';
import {
  TEST_WRONG_CODES_DAY_FACTOR,
  TEST_WRONG_CODES_HARD_FACTOR,
  TEST_WRONG_CODES_NETWORK_FACTOR,
  starterBlock,
  starterTags,
  takeWrongCodePoints,
  wrongCodeBudgets,
} from './test-number-wrong-codes.js';

const NUMBER = '+79990000001';
const POINTS = 10;
const MAX_ATTEMPTS = 3;
const CEILING = POINTS * TEST_WRONG_CODES_DAY_FACTOR;
const HARD = CEILING * TEST_WRONG_CODES_HARD_FACTOR;
const DAY = 86_400_000;
const { dataKeys } = resolveVerificationOptions({
  api: { baseUrl: 'http://127.0.0.1:9', apiKey: 'key', apiSecret: 'secret-secret-secret' },
});

function fixture() {
  const now = { t: 1_800_000_000_000 };
  const store = new MemoryStore({ clock: () => now.t });
  /** One wrong code of a starter's session: whether it was compared (false: not compared). */
  const wrong = async (starter: { owner?: string; network?: string } | null) => {
    const session = { phoneNumber: NUMBER, ...(starter === null ? {} : starterTags(dataKeys, starter)) };
    const budgets = wrongCodeBudgets(
      dataKeys,
      { points: POINTS, windowMs: 3_600_000 },
      MAX_ATTEMPTS,
      session,
    );
    return !(await takeWrongCodePoints(store, budgets)).spent;
  };
  /** The number's ceiling (less `spent` already) spent by starters each within its own hourly budget. */
  const spendCeiling = async (spent = 0) => {
    for (let n = spent; n < CEILING; n++)
      expect(await wrong({ network: `net:${Math.floor(n / POINTS)}` })).toBe(true);
  };
  return { now, store, wrong, spendCeiling };
}

describe("a test number's wrong codes past the day's ceiling", () => {
  it('the ceiling: its last point is compared for anyone; past it a starter who spent points of it is not, a fresh one is', async () => {
    const { store, wrong } = fixture();
    for (let net = 0; net < CEILING / POINTS - 1; net++)
      for (let i = 0; i < POINTS; i++) await wrong({ network: `net:${net}` });
    const last = { network: 'net:last' };
    for (let i = 0; i < POINTS; i++) expect(await wrong(last)).toBe(true);
    // The ceiling is spent: `last` has made 10 wrong codes today (more than its reserve of 3).
    expect(await wrong({ network: 'net:0' })).toBe(false);
    expect(await wrong({ owner: 'apple-review' })).toBe(true);
    await store.close();
  });

  it("a starter's reserve is maxAttempts wrong codes of its day: the 3rd is compared, the 4th not; another owner of its network has its own", async () => {
    const { store, wrong, spendCeiling } = fixture();
    await spendCeiling();
    const reviewer = { owner: 'apple-review', network: '198.51.100.0/24' };
    for (let i = 0; i < MAX_ATTEMPTS; i++) expect(await wrong(reviewer)).toBe(true);
    expect(await wrong(reviewer)).toBe(false);
    // Another owner of the reviewer's network has a reserve of its own.
    expect(await wrong({ owner: 'demo', network: '198.51.100.0/24' })).toBe(true);
    await store.close();
  });

  it('a wrong code made before the ceiling was spent counts in the reserve', async () => {
    const { store, wrong, spendCeiling } = fixture();
    const reviewer = { owner: 'apple-review' };
    expect(await wrong(reviewer)).toBe(true);
    expect(await wrong(reviewer)).toBe(true);
    await spendCeiling(2);
    expect(await wrong(reviewer)).toBe(true);
    expect(await wrong(reviewer)).toBe(false);
    await store.close();
  });

  it('the hard ceiling counts compared codes only: refused checks never spend it; at it the last is compared, past it nobody of its block', async () => {
    const { now, store, wrong, spendCeiling } = fixture();
    await spendCeiling();
    // An hour on, starters past their reserve (their hourly budgets whole again) keep checking: refused
    // at the number's day, and the hard ceiling is untouched.
    now.t += 3_600_000;
    for (let i = 0; i < 50; i++) expect(await wrong({ network: `net:${i % 10}` })).toBe(false);
    // Owners with no address: the host's block, whose hard ceiling only their compared codes spend.
    const reserves = HARD / MAX_ATTEMPTS;
    let compared = 0;
    for (let n = 0; compared < HARD; n++)
      for (let i = 0; i < MAX_ATTEMPTS && compared < HARD; i++) {
        expect(await wrong({ owner: `fresh-${n}` })).toBe(true);
        compared++;
      }
    expect(compared).toBeGreaterThanOrEqual(reserves);
    // The fresh owners came with no address (the host's block): past its hard ceiling nobody of it is
    // compared; a starter of another block (a /16) still is, within its reserve.
    expect(await wrong({ owner: 'apple-review' })).toBe(false);
    expect(await wrong({ owner: 'apple-review', network: '198.51.100.0/24' })).toBe(true);
    await store.close();
  });

  it('the day: one tick before it ends nothing is compared past the hard ceiling; at its end the ceiling is whole again', async () => {
    const { now, store, wrong, spendCeiling } = fixture();
    const began = now.t;
    await spendCeiling();
    for (let n = 0; n < HARD; n++) await wrong({ owner: `fresh-${n}` });
    expect(await wrong({ owner: 'apple-review' })).toBe(false);
    now.t = began + DAY - 1;
    expect(await wrong({ owner: 'apple-review-2' })).toBe(false);
    now.t = began + DAY;
    // A starter that spent its hour long ago but made 10 wrong codes yesterday: compared again.
    expect(await wrong({ network: 'net:0' })).toBe(true);
    await store.close();
  });

  it('a session stored before starters were kept has no reserve: past the ceiling it is not compared', async () => {
    const { store, wrong, spendCeiling } = fixture();
    await spendCeiling();
    expect(await wrong(null)).toBe(false);
    await store.close();
  });

  it("the network's budget refuses only its spenders: past it another owner's codes are compared up to its reserve", async () => {
    const { store, wrong } = fixture();
    const net = '198.51.100.0/24';
    for (let n = 0; n < TEST_WRONG_CODES_NETWORK_FACTOR; n++)
      for (let i = 0; i < POINTS; i++)
        expect(await wrong({ owner: `mallory-${n}`, network: net })).toBe(true);
    // The network's points are spent: a spender is refused (its own budget too), a new owner is not.
    expect(await wrong({ owner: 'mallory-0', network: net })).toBe(false);
    for (let i = 0; i < MAX_ATTEMPTS; i++)
      expect(await wrong({ owner: 'apple-review', network: net })).toBe(true);
    expect(await wrong({ owner: 'apple-review', network: net })).toBe(false);
    await store.close();
  });

  it("one network's budget is its own: spent on one network, another's owners (or owners with no address) keep theirs", async () => {
    const { store, wrong } = fixture();
    for (let n = 0; n < TEST_WRONG_CODES_NETWORK_FACTOR; n++)
      for (let i = 0; i < POINTS; i++) await wrong({ owner: `mallory-${n}`, network: '198.51.100.0/24' });
    // Past their reserve, an owner of another network and one with no address are compared up to their own
    // hourly points: the spent network's count is not theirs.
    for (let i = 0; i < POINTS; i++)
      expect(await wrong({ owner: 'bob', network: '203.0.113.0/24' })).toBe(true);
    for (let n = 0; n <= TEST_WRONG_CODES_NETWORK_FACTOR; n++)
      for (let i = 0; i < POINTS; i++) expect(await wrong({ owner: `addressless-${n}` })).toBe(true);
    await store.close();
  });

  it("a starter's block: its network's IPv4 /16 or IPv6 /32, a listed owner's own, else the host's", () => {
    expect(starterBlock({ network: '198.51.100.0/24' })).toBe('198.51.0.0/16');
    expect(starterBlock({ owner: 'apple-review', network: '198.51.100.0/24' })).toBe('198.51.0.0/16');
    expect(starterBlock({ network: '2001:db8:1::/48' })).toBe('2001:db8::/32');
    expect(starterBlock({ owner: 'apple-review', network: '198.51.100.0/24', listed: true })).toBe(
      'owner:apple-review',
    );
    expect(starterBlock({})).toBe('host');
  });

  it("a starter's refused codes never spend its block's hard ceiling", async () => {
    const { now, store, wrong, spendCeiling } = fixture();
    await spendCeiling();
    const block = (n: number) => ({ network: `198.51.${n}.0/24` });
    for (let i = 0; i < MAX_ATTEMPTS; i++) expect(await wrong(block(1))).toBe(true);
    // Past its reserve, hour after hour (its hourly budget whole again): refused, and not counted.
    for (let hour = 0; hour < 20; hour++) {
      now.t += 3_600_000;
      for (let i = 0; i < POINTS; i++) expect(await wrong(block(1))).toBe(false);
    }
    expect(await wrong(block(2))).toBe(true);
    await store.close();
  });
});
