import { isObject, positiveInt, rulesUnder, type OptionRule } from '../core/option-rules.js';
import { PURPOSE_PATTERN } from './purposes.options.js';
import { array, knownMethod, onlyKeys, section } from './verification-option-checks.js';

/** The rule of `purposes` itself (in the module's table; each purpose's own rules follow from its keys). */
export const PURPOSES_OPTION_RULES: readonly OptionRule[] = [
  {
    path: 'purposes',
    checks: [section('an object of policies by purpose, like { step_up: { methods: ["sms"] } }')],
  },
];

/** The rules of one purpose's policy, under `purposes.<name>`. */
const POLICY_RULES: readonly OptionRule[] = [
  {
    path: '',
    checks: [
      (v) =>
        isObject(v)
          ? onlyKeys(['methods', 'limits', 'claimTtlMs'], 'known keys')(v, { parent: {}, root: {} })
          : 'must be an object { methods?, limits?, claimTtlMs? }',
    ],
  },
  { path: 'methods', checks: [array('must be an array of methods like ["sms"] ([] allows none)')] },
  { path: 'methods[]', checks: [knownMethod] },
  { path: 'limits', checks: [section('{ startPerPhone? }')] },
  {
    path: 'limits',
    checks: [
      (v) =>
        isObject(v) ? onlyKeys(['startPerPhone'], 'known keys')(v, { parent: {}, root: {} }) : undefined,
    ],
  },
  { path: 'limits.startPerPhone', checks: [section('{ points, windowMs }')] },
  { path: 'limits.startPerPhone.points', required: true, checks: [positiveInt] },
  { path: 'limits.startPerPhone.windowMs', required: true, checks: [positiveInt] },
  { path: 'claimTtlMs', checks: [positiveInt] },
];

/**
 * The rules of each purpose `purposes` names, under its own path (`purposes.step_up.methods[0]`); a
 * key that is not a purpose's name is refused naming it, its policy unread. Checked in the keys' order.
 */
export function purposeRules(purposes: unknown): OptionRule[] {
  if (!isObject(purposes)) return [];
  return Object.keys(purposes).flatMap((name) =>
    PURPOSE_PATTERN.test(name)
      ? rulesUnder(`purposes.${name}`, POLICY_RULES).map((rule) =>
          rule.path.endsWith('.') ? { ...rule, path: rule.path.slice(0, -1), required: true } : rule,
        )
      : [
          {
            path: 'purposes',
            checks: [
              () =>
                `has a key ${JSON.stringify(name.slice(0, 40))} that is not a purpose name (${PURPOSE_PATTERN.source})`,
            ],
          },
        ],
  );
}
