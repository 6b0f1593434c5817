/**
 * The figures the docs give for the module's fixed constants (no option changes them) say what the code
 * holds: a giver's share, the networks that flag a country, the reads kept for rebuilds, the proof
 * reserve's shares, the refusal entries a caller may write, a test number's delivery delay, kept sessions,
 * spare slots and wrong-code budgets. A constant changed without its page fails here, as a renamed one fails
 * `code-names.part.ts`.
 */
import { describe, expect, it } from '@jest/globals';
import { GUARD_READS_PER_OWNER } from '../../src/guard/guard-read-meter.js';
import { REFUSAL_ENTRIES_PER_CALLER_HOUR } from '../../src/history/refusal-admission.js';
import { CALLER_RESERVE_SHARE, RECORD_FLOOR_SHARE } from '../../src/protection/proof-reserve.js';
import { VERIFICATION_DEFAULTS } from '../../src/options/verification-options.defaults.js';
import { STATUS_READS_PER_CALLER } from '../../src/protection/status-read-meter.js';
import { SPARE_TEST_SESSION_SLOTS } from '../../src/core/test-session.js';
import {
  KEPT_TEST_SESSIONS_PER_NETWORK_HOUR,
  KEPT_TEST_SESSIONS_PER_NUMBER_HOUR,
} from '../../src/test-numbers/test-number-sessions.js';
import { TEST_DELIVERY_MIN_MS, TEST_DELIVERY_SPREAD_MS } from '../../src/test-numbers/test-session-state.js';
import {
  TEST_WRONG_CODES_DAY_FACTOR,
  TEST_WRONG_CODES_HARD_FACTOR,
  TEST_WRONG_CODES_NETWORK_FACTOR,
} from '../../src/test-numbers/test-number-wrong-codes.js';
import { GIVER_SHARES, PAST_NETWORKS_FLAG } from '../../src/pumping/giver-shares.js';
import { HISTORY_RANGES, OWNER_RETRIES, TYPING_MS } from '../../src/pumping/pumping-rules.js';
import { readDoc } from './source-program.js';

const WORDS: Record<string, number> = { three: 3, 'a tenth': 0.1, half: 0.5, twice: 2 };
const TEST_CODES_PER_STARTER = VERIFICATION_DEFAULTS.testNumbers.wrongCodesPerNumber;
const value = (text: string): number => WORDS[text] ?? Number(text.replace(/,/g, ''));
/** Prose with its line breaks and list indents as single spaces. */
const prose = (page: string): string => readDoc(page).replace(/\s+/g, ' ');

/** [page, the sentence with its figures captured, the values the code holds, in order]. */
const FIGURES: [page: string, pattern: RegExp, expected: number[]][] = [
  [
    'docs/protection.md',
    /`GIVER_SHARES`: (\d+) a caller, (\d+) a network/,
    [GIVER_SHARES.client, GIVER_SHARES.network],
  ],
  ['docs/protection.md', /or when (\d+) networks past their share/, [PAST_NETWORKS_FLAG]],
  ['docs/protection.md', /a prefix verified in fewer than (\d+) ranges/, [HISTORY_RANGES]],
  ['docs/protection.md', /starts of the last (\d+) minutes are excused/, [TYPING_MS / 60_000]],
  ['docs/protection.md', /up to (three) starts: a start, a resend, a switch/, [OWNER_RETRIES]],
  [
    'docs/protection.md',
    /takes a read from (\d+) more kept for rebuilds/,
    [STATUS_READS_PER_CALLER.points - STATUS_READS_PER_CALLER.refreshes],
  ],
  [
    'docs/protection.md',
    /takes at most (a tenth) of the reserve, and such callers together (half), so their proofs stop at (\d+) % of the cap by default/,
    [
      CALLER_RESERVE_SHARE,
      RECORD_FLOOR_SHARE,
      Math.round(100 * (1 - VERIFICATION_DEFAULTS.limits.pumping.reserveShare * RECORD_FLOOR_SHARE)),
    ],
  ],
  [
    'docs/verified-phone-guard.md',
    /`GUARD_READS_PER_OWNER`: (\d+) refreshes a minute per `owner\(req\)`, else per client key; rebuilds of a record the store lost may take (\d+) more/,
    [GUARD_READS_PER_OWNER.refreshes, GUARD_READS_PER_OWNER.points - GUARD_READS_PER_OWNER.refreshes],
  ],
  [
    'docs/test-numbers.md',
    /reads `delivered` (\d+) to (\d+) s after it/,
    [TEST_DELIVERY_MIN_MS / 1000, (TEST_DELIVERY_MIN_MS + TEST_DELIVERY_SPREAD_MS) / 1000],
  ],
  [
    'docs/test-numbers.md',
    /A number keeps (\d+) test sessions an hour, a client network \(IPv4 \/24, IPv6 \/48\) (\d+) of them/,
    [KEPT_TEST_SESSIONS_PER_NUMBER_HOUR, KEPT_TEST_SESSIONS_PER_NETWORK_HOUR],
  ],
  ['docs/test-numbers.md', /spare sessions \(`test_x…`\) in (\d+) slots/, [SPARE_TEST_SESSION_SLOTS]],
  [
    'docs/test-numbers.md',
    /and (\d+) times it per network for owners' sessions/,
    [TEST_WRONG_CODES_NETWORK_FACTOR],
  ],
  [
    'docs/test-numbers.md',
    /the number's day across callers, (\d+) times the points \((\d+) by default\).* reaches (twice) the ceiling \((\d+)\)/,
    [
      TEST_WRONG_CODES_DAY_FACTOR,
      TEST_WRONG_CODES_DAY_FACTOR * TEST_CODES_PER_STARTER.points,
      TEST_WRONG_CODES_HARD_FACTOR,
      TEST_WRONG_CODES_HARD_FACTOR * TEST_WRONG_CODES_DAY_FACTOR * TEST_CODES_PER_STARTER.points,
    ],
  ],
  [
    'docs/history.md',
    /`REFUSAL_ENTRIES_PER_CALLER_HOUR` \((\d+)\) an hour/,
    [REFUSAL_ENTRIES_PER_CALLER_HOUR],
  ],
];

describe('figures the docs give for fixed constants', () => {
  it("the guard's reads are metered per minute, as verified-phone-guard.md says", () => {
    expect(GUARD_READS_PER_OWNER.windowMs).toBe(60_000);
  });

  it.each(FIGURES)('%s: %s', (page, pattern, expected) => {
    const found = pattern.exec(prose(page));
    expect(found?.slice(1).map(value)).toEqual(expected);
  });
});
