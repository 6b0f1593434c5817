import { bool, describe, fn, isObject, positiveInt, oneOf, type OptionRule } from '../core/option-rules.js';
import { CODE_PATTERN, CODE_RULE } from '../core/verification-code.js';
import { TEST_NUMBER_OUTCOMES } from '../core/test-session.js';
import { HISTORY_MAX_ENTRIES_BOUND } from './integrator-features.options.js';
import { array, intRange, matching, objectOrFalse, onlyKeys, section } from './verification-option-checks.js';

/** Outcomes that end a test session on their own: such a number needs no code. */
const ENDING_OUTCOMES: readonly string[] = ['verified', 'expired', 'failed'];

/** The rules of `name`, `webhooks.decorators`, `testNumbers`, `verifiedPhone`, `phoneChange`, `history` and `ledger` (spread into the module's table). A code is never echoed in a message. */
export const INTEGRATOR_FEATURE_OPTION_RULES: readonly OptionRule[] = [
  {
    path: 'name',
    checks: [matching(/^[A-Za-z0-9_.-]{1,64}$/, 'a registration name of letters, digits, _ . - (1 to 64)')],
  },
  { path: 'testNumbers', checks: [section('{ numbers, owners?, maxAttempts?, wrongCodesPerNumber? }')] },
  {
    path: 'testNumbers',
    checks: [
      (v) =>
        isObject(v)
          ? onlyKeys(['numbers', 'owners', 'maxAttempts', 'wrongCodesPerNumber'], 'known keys')(v, {
              parent: {},
              root: {},
            })
          : undefined,
    ],
  },
  {
    path: 'testNumbers.numbers',
    required: true,
    checks: [array('must be an array of { phoneNumber, code }')],
  },
  {
    path: 'testNumbers.numbers[]',
    checks: [(v) => (isObject(v) ? undefined : 'must be an object { phoneNumber, code?, outcome? }')],
  },
  {
    path: 'testNumbers.numbers[].phoneNumber',
    required: true,
    // Exact numbers only: a prefix or a pattern would hand the fixed code to real people.
    checks: [matching(/^\+[1-9]\d{6,14}$/, 'an E.164 number like "+79990000001" (exact; no prefixes)')],
  },
  { path: 'testNumbers.numbers[].outcome', checks: [oneOf(...TEST_NUMBER_OUTCOMES)] },
  {
    path: 'testNumbers.numbers[].code',
    required: true,
    checks: [
      (v, { parent }) => {
        if (v === undefined)
          return ENDING_OUTCOMES.includes(parent.outcome as string)
            ? undefined
            : 'is required unless outcome is "verified", "expired" or "failed"';
        return typeof v === 'string' && CODE_PATTERN.test(v) ? undefined : `must be ${CODE_RULE} (a string)`;
      },
    ],
  },
  {
    path: 'testNumbers.numbers',
    checks: [
      (v) => {
        const numbers = (v as { phoneNumber?: unknown }[]).map((entry) => entry?.phoneNumber);
        const twice = numbers.find((number, i) => numbers.indexOf(number) !== i);
        return twice === undefined ? undefined : `names ${String(twice)} twice`;
      },
    ],
  },
  { path: 'testNumbers.owners', checks: [array('must be an array of owner ids')] },
  { path: 'testNumbers.owners[]', checks: [matching(/^.{1,200}$/s, 'a non-empty owner id')] },
  { path: 'testNumbers.maxAttempts', checks: [positiveInt] },
  { path: 'testNumbers.wrongCodesPerNumber', checks: [section('{ points, windowMs }')] },
  { path: 'testNumbers.wrongCodesPerNumber.points', required: true, checks: [positiveInt] },
  { path: 'testNumbers.wrongCodesPerNumber.windowMs', required: true, checks: [positiveInt] },

  {
    path: 'webhooks.decorators',
    checks: [array('must be an array of class decorators like [SkipThrottle()]')],
  },
  { path: 'webhooks.decorators[]', checks: [fn] },
  { path: 'verifiedPhone', checks: [section('{ header?, bodyField?, claimHeader?, claimTtlMs? }')] },
  {
    path: 'verifiedPhone.header',
    checks: [matching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'an HTTP header name')],
  },
  { path: 'verifiedPhone.bodyField', checks: [matching(/^[A-Za-z0-9_$-]{1,100}$/, 'a JSON field name')] },
  {
    path: 'verifiedPhone.claimHeader',
    checks: [matching(/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/, 'an HTTP header name')],
  },
  { path: 'verifiedPhone.claimTtlMs', checks: [positiveInt] },
  { path: 'phoneChange', checks: [section('{ cooldownMs?, confirmOld? }')] },
  { path: 'phoneChange.cooldownMs', checks: [positiveInt] },
  { path: 'phoneChange.confirmOld', checks: [bool] },

  { path: 'history', checks: [objectOrFalse('{ retentionDays?, maxEntries? }')] },
  { path: 'history.retentionDays', checks: [intRange(1, 3650, 'days')] },
  { path: 'history.maxEntries', checks: [intRange(1, HISTORY_MAX_ENTRIES_BOUND, 'entries')] },

  { path: 'ledger', checks: [objectOrFalse('{ tolerance?, retentionDays?, maxRowsPerDay? }')] },
  {
    path: 'ledger.tolerance',
    checks: [
      (v) =>
        typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1_000_000
          ? undefined
          : `must be an amount from 0 to 1000000 (got ${describe(v)})`,
    ],
  },
  { path: 'ledger.retentionDays', checks: [intRange(1, 400, 'days')] },
  { path: 'ledger.maxRowsPerDay', checks: [intRange(1, 100_000, 'rows')] },
];
