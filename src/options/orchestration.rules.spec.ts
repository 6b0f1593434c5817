import { describe, expect, it } from '@jest/globals';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import { api, itRefusesEachCase, refusal, type RefusalCase } from '../../test/support/option-refusals.js';
import { ORCHESTRATION_OPTION_RULES } from './orchestration.rules.js';

/** One wrong value per rule of `orchestration`: [case, options, field named, words of the message]. */
const CASES: RefusalCase[] = [
  ['orchestration', { api, orchestration: 'cheap' }, 'orchestration', 'must be an object'],

  [
    'orchestration.methods',
    { api, orchestration: { methods: [] } },
    'orchestration.methods',
    'non-empty array like ["reverse_flash_call", "sms"]',
  ],

  [
    'orchestration.methods[]',
    { api, orchestration: { methods: ['sms', 'pigeon'] } },
    'orchestration.methods[1]',
    'is not a known method (got "pigeon"',
  ],

  [
    'orchestration.methods outside methods',
    { api, methods: ['sms'], orchestration: { methods: ['flash_call'] } },
    'orchestration.methods',
    'names none of the offered "methods"',
  ],

  [
    'orchestration.mode',
    { api, orchestration: { mode: 'cheapest' } },
    'orchestration.mode',
    'must be "cost_and_time", "price" or "cost_per_success" (got "cheapest")',
  ],

  [
    'orchestration.fallback',
    { api, orchestration: { fallback: true } },
    'orchestration.fallback',
    'or false',
  ],

  [
    'orchestration.fallback.stalledShare',
    { api, orchestration: { fallback: { stalledShare: 1 } } },
    'orchestration.fallback.stalledShare',
    'share from 0 to below 1',
  ],

  [
    'orchestration.fallback.stalledShare 0',
    { api, orchestration: { fallback: { stalledShare: 0 } } },
    'orchestration.fallback.stalledShare',
    'must be above 0',
  ],

  [
    'orchestration.fallback.waitingShare',
    { api, orchestration: { fallback: { waitingShare: true } } },
    'orchestration.fallback.waitingShare',
    'share from 0 to below 1',
  ],

  [
    'orchestration.fallback.ceilingMs below floorMs',
    { api, orchestration: { fallback: { floorMs: 20_000, ceilingMs: 15_000 } } },
    'orchestration.fallback.ceilingMs',
    'must be at least floorMs',
  ],

  [
    'orchestration.fallback.floorMs above the default ceiling, the ceiling left out',
    { api, orchestration: { fallback: { floorMs: 120_000 } } },
    'orchestration.fallback.ceilingMs',
    'must be at least floorMs (its default is 90000 ms: give ceilingMs too)',
  ],

  [
    'orchestration.fallback.floorMs',
    { api, orchestration: { fallback: { floorMs: 500 } } },
    'orchestration.fallback.floorMs',
    'from 1000 to 600000',
  ],

  [
    'orchestration.fallback.minSamples',
    { api, orchestration: { fallback: { minSamples: 0 } } },
    'orchestration.fallback.minSamples',
    'positive integer',
  ],

  [
    'orchestration.minSamples',
    { api, orchestration: { minSamples: 0 } },
    'orchestration.minSamples',
    'positive integer',
  ],

  [
    'orchestration.minCallers',
    { api, orchestration: { minCallers: 1.5 } },
    'orchestration.minCallers',
    'positive integer',
  ],

  [
    'orchestration.skippable',
    { api, orchestration: { skippable: 'some' } },
    'orchestration.skippable',
    'must be "all" or an array of methods (got "some")',
  ],

  [
    'orchestration.skippable[]',
    { api, orchestration: { skippable: ['fax'] } },
    'orchestration.skippable[0]',
    'is not a known method',
  ],

  [
    'orchestration.timeoutSeconds',
    { api, orchestration: { timeoutSeconds: 30 } },
    'orchestration.timeoutSeconds',
    'must be an object of seconds by method',
  ],

  [
    'orchestration.timeoutSeconds unknown method',
    { api, orchestration: { timeoutSeconds: { fax: 30 } } },
    'orchestration.timeoutSeconds',
    'has an unknown key "fax" (methods: reverse_flash_call',
  ],

  ...VERIFICATION_METHODS.map((method): RefusalCase => [
    `orchestration.timeoutSeconds.${method}`,
    { api, orchestration: { timeoutSeconds: { [method]: 0 } } },
    `orchestration.timeoutSeconds.${method}`,
    'must be a whole number of seconds from 1 to 600 (got 0)',
  ]),

  [
    'orchestration.maxSteps',
    { api, orchestration: { maxSteps: 1.5 } },
    'orchestration.maxSteps',
    'positive integer',
  ],

  [
    'orchestration.maxCost',
    { api, orchestration: { maxCost: -1 } },
    'orchestration.maxCost',
    'must be a positive number (got -1)',
  ],

  [
    'orchestration.exclude',
    { api, orchestration: { exclude: ['sms'] } },
    'orchestration.exclude',
    'must be { mobile?, desktop? }',
  ],

  [
    'orchestration.exclude unknown device',
    { api, orchestration: { exclude: { tablet: ['sms'] } } },
    'orchestration.exclude',
    'has an unknown key "tablet" (device hints: mobile, desktop)',
  ],

  ...(['mobile', 'desktop'] as const).flatMap((device): RefusalCase[] => [
    [
      `orchestration.exclude.${device}`,
      { api, orchestration: { exclude: { [device]: 'sms' } } },
      `orchestration.exclude.${device}`,
      'must be an array of methods',
    ],
    [
      `orchestration.exclude.${device}[]`,
      { api, orchestration: { exclude: { [device]: ['sms', 'tv'] } } },
      `orchestration.exclude.${device}[1]`,
      'is not a known method (got "tv"',
    ],
  ]),
];

describe('the rules of `orchestration`: each refuses what it should, naming the field', () => {
  itRefusesEachCase(CASES, ORCHESTRATION_OPTION_RULES);

  it('names the default of the bound left out, and none when both were given', () => {
    const given = refusal({ api, orchestration: { fallback: { floorMs: 20_000, ceilingMs: 15_000 } } });
    expect(given.message.endsWith('must be at least floorMs')).toBe(true);
    const left = refusal({ api, orchestration: { fallback: { floorMs: 120_000 } } });
    expect(
      left.message.endsWith('must be at least floorMs (its default is 90000 ms: give ceilingMs too)'),
    ).toBe(true);
    const floorLeft = refusal({ api, orchestration: { fallback: { ceilingMs: 5_000 } } });
    expect(floorLeft.message.endsWith('must be at least floorMs (10000 ms by default)')).toBe(true);
  });
});
