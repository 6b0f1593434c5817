import { describe } from '@jest/globals';
import {
  api,
  itRefusesAndBoots,
  type BootCase,
  type RefusalCase,
} from '../../test/support/option-refusals.js';

/*
 * The integrator features' rules in their other shapes (integrator-features.rules.spec.ts gives one
 * wrong value per rule): what a careless rule would let through, and the values at a bound that boot.
 */
const testNumbers = (extra: Record<string, unknown>) => ({
  api,
  testNumbers: { numbers: [{ phoneNumber: '+79990000001', code: '1234' }], ...extra },
});
const number = (entry: Record<string, unknown> | null) => ({ api, testNumbers: { numbers: [entry] } });

const REFUSED: RefusalCase[] = [
  [
    'a test number with text before it',
    number({ phoneNumber: 'x+79990000001', code: '1234' }),
    'testNumbers.numbers[0].phoneNumber',
    'exact; no prefixes',
  ],
  [
    'a test number with digits after it',
    number({ phoneNumber: '+7999000000112345', code: '1234' }),
    'testNumbers.numbers[0].phoneNumber',
    'exact; no prefixes',
  ],
  [
    'a test number given twice',
    {
      api,
      testNumbers: {
        numbers: [
          { phoneNumber: '+79990000001', code: '1234' },
          { phoneNumber: '+79990000001', code: '4321' },
        ],
      },
    },
    'testNumbers.numbers',
    'names +79990000001 twice',
  ],
  [
    'a code given as a number',
    number({ phoneNumber: '+79990000001', code: 1234 }),
    'testNumbers.numbers[0].code',
    '(a string)',
  ],
  [
    'no code for a number whose outcome is code_required',
    number({ phoneNumber: '+79990000001', outcome: 'code_required' }),
    'testNumbers.numbers[0].code',
    'is required unless outcome is',
  ],
  [
    'a test owner past 200 characters',
    testNumbers({ owners: ['o'.repeat(201)] }),
    'testNumbers.owners[0]',
    'a non-empty owner id',
  ],
  [
    'a wrong-code budget without its window',
    testNumbers({ wrongCodesPerNumber: { points: 3 } }),
    'testNumbers.wrongCodesPerNumber.windowMs',
    'positive integer (got undefined)',
  ],
  ['an unknown test numbers key', testNumbers({ owner: ['a'] }), 'testNumbers', '(known keys: numbers'],
  ['a registration name past 64 characters', { api, name: 'n'.repeat(65) }, 'name', '(1 to 64)'],
  ['a registration name with a space', { api, name: 'a b' }, 'name', 'a registration name'],
  [
    'a ledger tolerance past a million',
    { api, ledger: { tolerance: 1_000_001 } },
    'ledger.tolerance',
    'from 0 to 1000000 (got 1000001)',
  ],
  [
    'a negative ledger tolerance',
    { api, ledger: { tolerance: -1 } },
    'ledger.tolerance',
    'from 0 to 1000000',
  ],
  [
    'a ledger tolerance given as text',
    { api, ledger: { tolerance: '1' } },
    'ledger.tolerance',
    'from 0 to 1000000',
  ],
  [
    'a test number without its phone number',
    number({ code: '1234' }),
    'testNumbers.numbers[0].phoneNumber',
    'an E.164 number',
  ],
  ['a test number entry that is null', number(null as never), 'testNumbers.numbers[0]', 'must be an object'],
  [
    'a body field with a space in it',
    { api, verifiedPhone: { bodyField: 'phone number' } },
    'verifiedPhone.bodyField',
    'a JSON field name',
  ],
  [
    'a body field past 100 characters',
    { api, verifiedPhone: { bodyField: 'p'.repeat(101) } },
    'verifiedPhone.bodyField',
    'a JSON field name',
  ],
  // Each range names its unit: a host reads "days" where a count of entries or rows would mislead.
  [
    'a history kept past ten years',
    { api, history: { retentionDays: 3651 } },
    'history.retentionDays',
    'a whole number of days from 1 to 3650',
  ],
  [
    'a history of 10001 entries',
    { api, history: { maxEntries: 10_001 } },
    'history.maxEntries',
    'a whole number of entries from 1 to 10000',
  ],
  [
    'a ledger kept past 400 days',
    { api, ledger: { retentionDays: 401 } },
    'ledger.retentionDays',
    'a whole number of days from 1 to 400',
  ],
  [
    'a ledger of 100001 rows a day',
    { api, ledger: { maxRowsPerDay: 100_001 } },
    'ledger.maxRowsPerDay',
    'a whole number of rows from 1 to 100000',
  ],
];

const BOOTS: BootCase[] = [
  [
    'a body field of letters, digits, _, $ and -',
    { api, verifiedPhone: { bodyField: 'phone_Number$-1' } },
    (r) => r.verifiedPhone.bodyField,
    'phone_Number$-1',
  ],
  [
    'a body field of 100 characters',
    { api, verifiedPhone: { bodyField: 'p'.repeat(100) } },
    (r) => r.verifiedPhone.bodyField,
    'p'.repeat(100),
  ],
  ['a registration name of 64 characters', { api, name: 'n'.repeat(64) }, (r) => r.name, 'n'.repeat(64)],
  [
    'ledger tolerances of 0 and a million',
    { api, ledger: { tolerance: 0 } },
    (r) => r.ledger && r.ledger.tolerance,
    0,
  ],
  [
    'a ledger tolerance of a million',
    { api, ledger: { tolerance: 1_000_000 } },
    (r) => r.ledger && r.ledger.tolerance,
    1_000_000,
  ],
  [
    'a test owner of 200 characters',
    testNumbers({ owners: ['o'.repeat(200)] }) as never,
    (r) => r.testNumbers.owners,
    ['o'.repeat(200)],
  ],
  [
    'numbers whose outcome ends them need no code',
    {
      api,
      testNumbers: {
        numbers: ['verified', 'expired', 'failed'].map((outcome, i) => ({
          phoneNumber: `+7999000000${i}`,
          outcome,
        })),
      },
    } as never,
    (r) => r.testNumbers.numbers.map((n) => n.outcome),
    ['verified', 'expired', 'failed'],
  ],
];

describe('integrator feature rules: the shapes a careless rule would let through', () => {
  itRefusesAndBoots(REFUSED, BOOTS);
});
