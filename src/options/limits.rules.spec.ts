import { describe } from '@jest/globals';
import { api, itRefusesEachCase, type RefusalCase } from '../../test/support/option-refusals.js';
import { LIMITS_OPTION_RULES, RATE_LIMITS } from './limits.rules.js';

/** One wrong value per rule of `limits` (with the spend cap and the pumping defence): [case, options, field named, words of the message]. */
const CASES: RefusalCase[] = [
  [
    'limits.pumping.grading',
    { api, limits: { pumping: { grading: 'yes' } } },
    'limits.pumping.grading',
    'must be true or false',
  ],

  ['limits', { api, limits: 'strict' }, 'limits', 'must be an object'],

  ['limits.enabled', { api, limits: { enabled: 'no' } }, 'limits.enabled', 'true or false'],

  ['limits.coalesceStarts', { api, limits: { coalesceStarts: 1 } }, 'limits.coalesceStarts', 'true or false'],

  [
    'limits.resendCooldownMs',
    { api, limits: { resendCooldownMs: true } },
    'limits.resendCooldownMs',
    'positive',
  ],

  ['limits.key', { api, limits: { key: 'ip' } }, 'limits.key', 'must be a function'],

  ['limits.beforeStart', { api, limits: { beforeStart: {} } }, 'limits.beforeStart', 'must be a function'],
  [
    'limits.assessStart',
    { api, limits: { assessStart: 'allow' } },
    'limits.assessStart',
    'must be a function',
  ],

  [
    'limits.ipv6PrefixLength',
    { api, limits: { ipv6PrefixLength: 16 } },
    'limits.ipv6PrefixLength',
    '32 to 128',
  ],

  [
    'limits.spendCap',
    { api, limits: { spendCap: 1000 } },
    'limits.spendCap',
    'must be { amount, windowMs } or false',
  ],

  [
    'limits.spendCap.amount',
    { api, limits: { spendCap: { windowMs: 1 } } },
    'limits.spendCap.amount',
    'positive number',
  ],

  [
    'limits.spendCap.windowMs',
    { api, limits: { spendCap: { amount: 1 } } },
    'limits.spendCap.windowMs',
    'positive',
  ],

  [
    'limits.spendCap.utcOffsetMinutes',
    { api, limits: { spendCap: { amount: 1, windowMs: 1, utcOffsetMinutes: 900 } } },
    'limits.spendCap.utcOffsetMinutes',
    '-720 to 840',
  ],

  [
    'limits.spendCap.worstCasePrice',
    { api, limits: { spendCap: { amount: 1, windowMs: 1, worstCasePrice: 0 } } },
    'limits.spendCap.worstCasePrice',
    'positive number',
  ],

  // The resolver reads each of RATE_LIMITS by name (typed), so the list cannot lose one unnoticed.
  ...RATE_LIMITS.flatMap((name): RefusalCase[] => [
    [
      `limits.${name}`,
      { api, limits: { [name]: 10 } },
      `limits.${name}`,
      'must be { points, windowMs } or false',
    ],
    [
      `limits.${name}.points`,
      { api, limits: { [name]: { points: 0, windowMs: 1 } } },
      `limits.${name}.points`,
      'positive integer (got 0)',
    ],
    [
      `limits.${name}.windowMs`,
      { api, limits: { [name]: { points: 1 } } },
      `limits.${name}.windowMs`,
      'positive',
    ],
  ]),

  ['limits.pumping', { api, limits: { pumping: 'on' } }, 'limits.pumping', 'must be an object ({ mode'],

  [
    'limits.pumping.mode',
    { api, limits: { pumping: { mode: 'block' } } },
    'limits.pumping.mode',
    '"enforce", "monitor" or "off"',
  ],

  [
    'limits.pumping.rangeDigits',
    { api, limits: { pumping: { rangeDigits: 2.5 } } },
    'limits.pumping.rangeDigits',
    '1 to 8',
  ],

  // Restated, not imported: a count dropped from the table must fail here.
  ...(
    [
      'windowMs',
      'rangeMinStarts',
      'prefixMinStarts',
      'freshRangeMinStarts',
      'freshPrefixMinStarts',
      'callerMinStarts',
      'countryMinStarts',
      'underAttackMinStarts',
      'holdMs',
      'maxHoldMs',
      'recordTtlMs',
    ] as const
  ).map((name): RefusalCase => [
    `limits.pumping.${name}`,
    { api, limits: { pumping: { [name]: -1 } } },
    `limits.pumping.${name}`,
    'must be a positive integer (got -1)',
  ]),

  [
    'limits.pumping.maxHoldMs below holdMs',
    { api, limits: { pumping: { holdMs: 10_000, maxHoldMs: 5_000 } } },
    'limits.pumping.maxHoldMs',
    'must be at least holdMs',
  ],

  [
    'limits.pumping.maxHoldMs below the default holdMs (holdMs left out)',
    { api, limits: { pumping: { maxHoldMs: 60_000 } } },
    'limits.pumping.maxHoldMs',
    'must be at least holdMs',
  ],

  [
    'limits.pumping.holdMs above the default maxHoldMs',
    { api, limits: { pumping: { holdMs: 100_000_000 } } },
    'limits.pumping.maxHoldMs',
    'must be at least holdMs',
  ],

  [
    'limits.pumping.minConversion',
    { api, limits: { pumping: { minConversion: 1 } } },
    'limits.pumping.minConversion',
    'share',
  ],

  [
    'limits.pumping.reserveShare',
    { api, limits: { pumping: { reserveShare: -0.1 } } },
    'limits.pumping.reserveShare',
    'share',
  ],

  [
    'limits.pumping.surgeFactor',
    { api, limits: { pumping: { surgeFactor: 0.5 } } },
    'limits.pumping.surgeFactor',
    'at least 1',
  ],

  [
    'limits.pumping.expectedConversion at 1 (every start would have to complete)',
    { api, limits: { pumping: { expectedConversion: { default: 1 } } } },
    'limits.pumping.expectedConversion',
    '.default must be a share above 0 and below 1',
  ],

  [
    'limits.pumping.expectedConversion at 0 for a country',
    { api, limits: { pumping: { expectedConversion: { RU: 0 } } } },
    'limits.pumping.expectedConversion',
    '.RU must be a share',
  ],

  [
    'limits.pumping.expectedConversion keyed by a lower-case code',
    { api, limits: { pumping: { expectedConversion: { ru: 0.7 } } } },
    'limits.pumping.expectedConversion',
    'ISO country codes',
  ],

  [
    'limits.pumping.expectedConversion not an object',
    { api, limits: { pumping: { expectedConversion: 0.7 } } },
    'limits.pumping.expectedConversion',
    '{ default?',
  ],

  [
    'limits.pumping.safeList',
    { api, limits: { pumping: { safeList: [] } } },
    'limits.pumping.safeList',
    '{ numbers?',
  ],

  [
    'limits.pumping.safeList.numbers',
    { api, limits: { pumping: { safeList: { numbers: 'x' } } } },
    'limits.pumping.safeList.numbers',
    'must be an array',
  ],

  [
    'limits.pumping.safeList.numbers[]',
    { api, limits: { pumping: { safeList: { numbers: ['89161234567'] } } } },
    'limits.pumping.safeList.numbers[0]',
    'E.164 number',
  ],

  [
    'limits.pumping.safeList.ranges',
    { api, limits: { pumping: { safeList: { ranges: {} } } } },
    'limits.pumping.safeList.ranges',
    'must be an array',
  ],

  [
    'limits.pumping.safeList.ranges[]',
    { api, limits: { pumping: { safeList: { ranges: ['7916'] } } } },
    'limits.pumping.safeList.ranges[0]',
    'a range like "+7916123"',
  ],

  [
    'limits.pumping.safeList.owners',
    { api, limits: { pumping: { safeList: { owners: 'me' } } } },
    'limits.pumping.safeList.owners',
    'must be an array',
  ],

  [
    'limits.pumping.safeList.owners[]',
    { api, limits: { pumping: { safeList: { owners: [''] } } } },
    'limits.pumping.safeList.owners[0]',
    'a non-empty owner id',
  ],
];

describe('the rules of `limits`: each refuses what it should, naming the field', () => {
  itRefusesEachCase(CASES, LIMITS_OPTION_RULES);
});
