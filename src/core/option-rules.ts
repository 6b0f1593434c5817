/**
 * The format of the option tables (the module's in options/, the API client's in api/): each rule
 * names the field it holds, checks it, and gives one message naming that field.
 */

import { PhoneVerificationError } from './phone-verification.error.js';

/** Thrown when an option is wrong (at boot, or when a standalone client is built); the message names the field. */
export class VerificationOptionsError extends PhoneVerificationError {
  constructor(
    readonly field: string,
    problem: string,
    /** Whose option it is: the module's, or the standalone `VerificationApiClient`'s. */
    owner = 'VerificationModule',
    /** The error behind the problem (`cause`), when one was caught. */
    options?: ErrorOptions,
  ) {
    super(`${owner}: option "${field}" ${problem}`, options);
  }
}

/** What is wrong with a value (completing "option "x" …"), or undefined when it passes. */
export type Check = (value: unknown, at: RuleContext) => string | undefined;

export interface RuleContext {
  /** The object that holds the field (`{}` when it is absent). */
  parent: Record<string, unknown>;
  /** The whole options object. */
  root: Record<string, unknown>;
}

export interface OptionRule {
  /**
   * Dotted path of the field, `[]` for each element of an array: `api.timeoutMs`, `methods[]`,
   * `limits.pumping.safeList.ranges[]`. A rule holds only where its parents are objects: under an
   * option switched off with `false`, or of the wrong type (its own rule says so first), it is skipped.
   */
  path: string;
  checks: Check[];
  /** Checked when its parent is given, even if the field is absent (a missing value fails). */
  required?: boolean;
  /** Checked even when the field and its parents are absent: a rule between fields. */
  always?: boolean;
}

/** `rules` with every path under `prefix` (the API client's table inside the module's `api`). */
export function rulesUnder(prefix: string, rules: readonly OptionRule[]): OptionRule[] {
  return rules.map((rule) => ({ ...rule, path: `${prefix}.${rule.path}` }));
}

/**
 * Applies each rule in order; the first that fails throws VerificationOptionsError naming the field.
 * When the failing field is absent, `beforeAbsent` runs first: a typo of its key (`apiSecrte`) is then
 * named as the key meant rather than reported as the field missing.
 */
export function checkOptions(
  rules: readonly OptionRule[],
  options: unknown,
  owner?: string,
  beforeAbsent?: () => void,
): void {
  const root = isObject(options) ? (options as Record<string, unknown>) : {};
  for (const rule of rules) {
    for (const field of fieldsAt(rule, options)) {
      if (field.value === undefined && !rule.required && !rule.always) continue;
      for (const check of rule.checks) {
        const problem = check(field.value, { parent: field.parent, root });
        if (problem === undefined) continue;
        if (field.value === undefined) beforeAbsent?.();
        throw new VerificationOptionsError(field.name, problem, owner);
      }
    }
  }
}

interface Field {
  name: string;
  value: unknown;
  parent: Record<string, unknown>;
  /** True when a parent on the way was absent. */
  orphan: boolean;
}

function fieldsAt(rule: OptionRule, options: unknown): Field[] {
  if (rule.path === '') return [{ name: '(root)', value: options, parent: {}, orphan: false }];
  let fields: Field[] = [{ name: '', value: options, parent: {}, orphan: false }];
  for (const segment of rule.path.split('.')) {
    const each = segment.endsWith('[]');
    const key = each ? segment.slice(0, -2) : segment;
    const next: Field[] = [];
    for (const field of fields) {
      const absent = field.value === undefined || field.value === null;
      if (!absent && !isObject(field.value)) continue;
      const parent = absent ? {} : (field.value as Record<string, unknown>);
      const name = field.name === '' ? key : `${field.name}.${key}`;
      const value = parent[key];
      const orphan = field.orphan || absent;
      if (!each) next.push({ name, value, parent, orphan });
      else if (Array.isArray(value))
        value.forEach((item, i) => next.push({ name: `${name}[${i}]`, value: item, parent, orphan }));
    }
    fields = next;
  }
  return rule.always ? fields : fields.filter((field) => !field.orphan);
}

/* ------------------------------------------------------------------ checks shared by both tables */

export const isObject = (v: unknown): v is object => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A value for a message: short, and never the content of an object. */
export function describe(v: unknown): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v);
  if (Array.isArray(v)) return 'an array';
  if (v === null) return 'null';
  return typeof v === 'object' ? 'an object' : String(v);
}

export const nonEmptyString: Check = (v) =>
  typeof v === 'string' && v.trim() !== '' ? undefined : 'must be a non-empty string';
export const positiveInt: Check = (v) =>
  Number.isInteger(v) && (v as number) > 0 ? undefined : `must be a positive integer (got ${describe(v)})`;
export const nonNegativeInt: Check = (v) =>
  Number.isInteger(v) && (v as number) >= 0
    ? undefined
    : `must be a non-negative integer (got ${describe(v)})`;
export const fn: Check = (v) => (typeof v === 'function' ? undefined : 'must be a function');
export const bool: Check = (v) =>
  typeof v === 'boolean' ? undefined : `must be true or false (got ${describe(v)})`;

/** One of the listed strings. */
export function oneOf(...allowed: string[]): Check {
  const words = allowed.map((a) => `"${a}"`);
  const list = words.length > 1 ? `${words.slice(0, -1).join(', ')} or ${words.at(-1)}` : words[0];
  return (v) => (allowed.includes(v as string) ? undefined : `must be ${list} (got ${describe(v)})`);
}
