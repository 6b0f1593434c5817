import { describe } from '@jest/globals';
import { SECRET, api, itRefusesEachCase, type RefusalCase } from '../../test/support/option-refusals.js';
import { INTEGRATOR_FEATURE_OPTION_RULES } from './integrator-features.rules.js';

/** One wrong value per rule of `name`, `webhooks.decorators`, `testNumbers`, `verifiedPhone`, `phoneChange`, `history` and `ledger`: [case, options, field named, words of the message]. */
const CASES: RefusalCase[] = [
  ['testNumbers', { api, testNumbers: [] }, 'testNumbers', 'must be { numbers'],

  [
    'testNumbers unknown key',
    { api, testNumbers: { numbers: [], codes: [] } },
    'testNumbers',
    'unknown key "codes"',
  ],

  ['testNumbers.numbers', { api, testNumbers: {} }, 'testNumbers.numbers', 'must be an array'],

  [
    'testNumbers.numbers twice',
    {
      api,
      testNumbers: {
        numbers: [
          { phoneNumber: '+79990000001', code: '1234' },
          { phoneNumber: '+79990000001', code: '1234' },
        ],
      },
    },
    'testNumbers.numbers',
    'names +79990000001 twice',
  ],

  [
    'testNumbers.numbers[]',
    { api, testNumbers: { numbers: ['+79990000001'] } },
    'testNumbers.numbers[0]',
    'must be an object',
  ],

  [
    'testNumbers.numbers[].phoneNumber',
    { api, testNumbers: { numbers: [{ phoneNumber: '+7999', code: '1234' }] } },
    'testNumbers.numbers[0].phoneNumber',
    'an E.164 number',
  ],

  [
    'testNumbers.numbers[].outcome',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '1234', outcome: 'sent' }] } },
    'testNumbers.numbers[0].outcome',
    'must be "verified", "expired", "failed" or "code_required"',
  ],

  [
    'testNumbers.numbers[].code missing',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', outcome: 'code_required' }] } },
    'testNumbers.numbers[0].code',
    'is required unless outcome',
  ],

  [
    'testNumbers.numbers[].code not digits (not echoed)',
    { api, testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '12ab' }] } },
    'testNumbers.numbers[0].code',
    'must be 4 to 8 digits (a string)',
  ],

  [
    'testNumbers.owners',
    { api, testNumbers: { numbers: [], owners: 'me' } },
    'testNumbers.owners',
    'must be an array',
  ],

  [
    'testNumbers.owners[]',
    { api, testNumbers: { numbers: [], owners: [''] } },
    'testNumbers.owners[0]',
    'a non-empty owner id',
  ],

  [
    'testNumbers.maxAttempts',
    { api, testNumbers: { numbers: [], maxAttempts: 1.5 } },
    'testNumbers.maxAttempts',
    'positive integer',
  ],

  [
    'testNumbers.wrongCodesPerNumber',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: 5 } },
    'testNumbers.wrongCodesPerNumber',
    'must be { points, windowMs }',
  ],

  [
    'testNumbers.wrongCodesPerNumber.points',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: { windowMs: 1000 } } },
    'testNumbers.wrongCodesPerNumber.points',
    'positive integer',
  ],

  [
    'testNumbers.wrongCodesPerNumber.windowMs',
    { api, testNumbers: { numbers: [], wrongCodesPerNumber: { points: 1, windowMs: 0 } } },
    'testNumbers.wrongCodesPerNumber.windowMs',
    'positive integer',
  ],

  ['verifiedPhone', { api, verifiedPhone: 'x' }, 'verifiedPhone', 'must be { header?'],

  [
    'verifiedPhone.header',
    { api, verifiedPhone: { header: 'x id' } },
    'verifiedPhone.header',
    'an HTTP header name',
  ],

  [
    'verifiedPhone.bodyField',
    { api, verifiedPhone: { bodyField: '' } },
    'verifiedPhone.bodyField',
    'a JSON field name',
  ],

  [
    'verifiedPhone.claimHeader',
    { api, verifiedPhone: { claimHeader: 'a:b' } },
    'verifiedPhone.claimHeader',
    'an HTTP header name',
  ],

  [
    'verifiedPhone.claimTtlMs',
    { api, verifiedPhone: { claimTtlMs: 0 } },
    'verifiedPhone.claimTtlMs',
    'positive integer',
  ],

  ['phoneChange', { api, phoneChange: 86_400_000 }, 'phoneChange', 'must be { cooldownMs?, confirmOld? }'],

  [
    'phoneChange.cooldownMs',
    { api, phoneChange: { cooldownMs: 0 } },
    'phoneChange.cooldownMs',
    'positive integer',
  ],

  [
    'phoneChange.confirmOld',
    { api, phoneChange: { confirmOld: 'yes' } },
    'phoneChange.confirmOld',
    'true or false',
  ],

  ['history', { api, history: true }, 'history', 'must be { retentionDays?, maxEntries? } or false'],

  [
    'history.retentionDays',
    { api, history: { retentionDays: 0 } },
    'history.retentionDays',
    'from 1 to 3650',
  ],

  ['history.maxEntries', { api, history: { maxEntries: 10_001 } }, 'history.maxEntries', 'from 1 to 10000'],

  ['ledger', { api, ledger: 1 }, 'ledger', 'must be { tolerance?, retentionDays?, maxRowsPerDay? } or false'],
  [
    'ledger.tolerance',
    { api, ledger: { tolerance: -0.01 } },
    'ledger.tolerance',
    'from 0 to 1000000 (got -0.01)',
  ],
  [
    'ledger.tolerance',
    { api, ledger: { tolerance: '1' } },
    'ledger.tolerance',
    'an amount from 0 to 1000000',
  ],
  ['ledger.tolerance', { api, ledger: { tolerance: 1_000_001 } }, 'ledger.tolerance', 'from 0 to 1000000'],
  ['ledger.retentionDays', { api, ledger: { retentionDays: 401 } }, 'ledger.retentionDays', 'from 1 to 400'],
  ['ledger.maxRowsPerDay', { api, ledger: { maxRowsPerDay: 0 } }, 'ledger.maxRowsPerDay', 'from 1 to 100000'],

  ['name', { api, name: 'brand b' }, 'name', 'a registration name'],

  [
    'webhooks.decorators',
    { api, webhooks: { secret: SECRET, decorators: 'x' } },
    'webhooks.decorators',
    'must be an array of class decorators',
  ],

  [
    'webhooks.decorators[]',
    { api, webhooks: { secret: SECRET, decorators: [1] } },
    'webhooks.decorators[0]',
    'must be a function',
  ],
];

describe('the rules of `name`, `webhooks.decorators`, `testNumbers`, `verifiedPhone`, `phoneChange`, `history` and `ledger`: each refuses what it should, naming the field', () => {
  itRefusesEachCase(CASES, INTEGRATOR_FEATURE_OPTION_RULES);
});
