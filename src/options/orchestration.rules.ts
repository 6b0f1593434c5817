import { describe, oneOf, positiveInt, type OptionRule } from '../core/option-rules.js';
import { DEVICE_HINTS } from '../core/journey.js';
import { VERIFICATION_METHODS } from '../core/verification-method.js';
import {
  array,
  intRange,
  knownMethod,
  nonEmptyArray,
  objectOrFalse,
  onlyKeys,
  positiveNumber,
  section,
  share,
} from './verification-option-checks.js';
import { VERIFICATION_DEFAULTS } from './verification-options.defaults.js';

const FALLBACK = VERIFICATION_DEFAULTS.orchestration.fallback as { floorMs: number; ceilingMs: number };

/** The rules of `orchestration` (spread into the module's table). */
export const ORCHESTRATION_OPTION_RULES: readonly OptionRule[] = [
  { path: 'orchestration', checks: [section()] },
  { path: 'orchestration.methods', checks: [nonEmptyArray('["reverse_flash_call", "sms"]')] },
  { path: 'orchestration.methods[]', checks: [knownMethod] },
  {
    path: 'orchestration.methods',
    checks: [
      (v, { root }) =>
        Array.isArray(root.methods) &&
        !(v as unknown[]).some((method) => (root.methods as unknown[]).includes(method))
          ? 'names none of the offered "methods": every automatic start would be refused'
          : undefined,
    ],
  },
  { path: 'orchestration.mode', checks: [oneOf('cost_and_time', 'price', 'cost_per_success')] },
  { path: 'orchestration.minSamples', checks: [positiveInt] },
  { path: 'orchestration.minCallers', checks: [positiveInt] },
  {
    path: 'orchestration.skippable',
    checks: [
      (v) =>
        v === 'all' || Array.isArray(v)
          ? undefined
          : `must be "all" or an array of methods (got ${describe(v)})`,
    ],
  },
  { path: 'orchestration.skippable[]', checks: [knownMethod] },
  {
    path: 'orchestration.timeoutSeconds',
    checks: [
      section('an object of seconds by method, like { sms: 60 }'),
      onlyKeys(VERIFICATION_METHODS, 'methods'),
    ],
  },
  ...VERIFICATION_METHODS.map((method): OptionRule => ({
    path: `orchestration.timeoutSeconds.${method}`,
    checks: [intRange(1, 600, 'seconds')],
  })),
  {
    path: 'orchestration.fallback',
    checks: [
      objectOrFalse('{ stalledShare?, waitingShare?, minSamples?, floorMs?, ceilingMs? }'),
      onlyKeys(['stalledShare', 'waitingShare', 'minSamples', 'floorMs', 'ceilingMs'], 'fields'),
    ],
  },
  {
    path: 'orchestration.fallback.stalledShare',
    checks: [
      (v, at) =>
        share(v, at) ?? (v === 0 ? 'must be above 0 (0 would wait for the slowest user)' : undefined),
    ],
  },
  {
    path: 'orchestration.fallback.waitingShare',
    checks: [(v, at) => (v === false ? undefined : share(v, at))],
  },
  { path: 'orchestration.fallback.minSamples', checks: [positiveInt] },
  { path: 'orchestration.fallback.floorMs', checks: [intRange(1000, 600_000, 'ms')] },
  { path: 'orchestration.fallback.ceilingMs', checks: [intRange(1000, 600_000, 'ms')] },
  {
    // Checked with the ceiling left out too (as maxHoldMs): a floorMs above the default ceiling would have
    // every learned moment cut below the floor.
    path: 'orchestration.fallback.ceilingMs',
    required: true,
    checks: [
      (v, { parent }) => {
        const floor = parent.floorMs as number | undefined;
        if (((v as number | undefined) ?? FALLBACK.ceilingMs) >= (floor ?? FALLBACK.floorMs))
          return undefined;
        // Whichever of the two was left out, its default is named.
        if (v === undefined)
          return `must be at least floorMs (its default is ${FALLBACK.ceilingMs} ms: give ceilingMs too)`;
        return `must be at least floorMs${floor === undefined ? ` (${FALLBACK.floorMs} ms by default)` : ''}`;
      },
    ],
  },
  { path: 'orchestration.maxSteps', checks: [positiveInt] },
  { path: 'orchestration.maxCost', checks: [positiveNumber] },
  {
    path: 'orchestration.exclude',
    checks: [section('{ mobile?, desktop? }'), onlyKeys(DEVICE_HINTS, 'device hints')],
  },
  ...DEVICE_HINTS.flatMap((device): OptionRule[] => [
    { path: `orchestration.exclude.${device}`, checks: [array('must be an array of methods')] },
    { path: `orchestration.exclude.${device}[]`, checks: [knownMethod] },
  ]),
];
