import { isObject, VerificationOptionsError, type OptionRule } from '../core/option-rules.js';

/**
 * Fields a host may give that no rule of the table names (checked where they are used, or open
 * objects): with the table's paths, every key of the option types (a docs test holds the two together).
 */
export const UNRULED_FIELDS = ['store', 'api.onRequest', 'limits.spendCap.currency'];

/**
 * Refuses a key the options do not have, in any group the table knows (`limit` for `limits`,
 * `limits.startPerPhon`, `testNumbers.numbers[0].cod`), naming the nearest known one: a typo would
 * otherwise boot with the default silently. Groups the table does not describe (a store instance, a
 * logger, a registry) are not looked into; a group it does is, however its object was made.
 */
export function checkKnownKeys(rules: readonly OptionRule[], options: unknown): void {
  const known = new Set([...rules.map((rule) => rule.path), ...UNRULED_FIELDS]);
  const groups = new Set([''].concat([...known].map((path) => parentOf(path)).filter((p) => p !== '')));
  const visit = (value: unknown, group: string, shown: string): void => {
    if (Array.isArray(value)) {
      if (groups.has(`${group}[]`)) value.forEach((item, i) => visit(item, `${group}[]`, `${shown}[${i}]`));
      return;
    }
    // A group's value is looked into whatever made it: a literal, `Object.create(null)`, a host's config class.
    if (!isObject(value)) return;
    const siblings = [...known].filter((path) => parentOf(path) === group && !path.endsWith('[]'));
    for (const [key, child] of Object.entries(value)) {
      const path = group === '' ? key : `${group}.${key}`;
      const name = shown === '' ? key : `${shown}.${key}`;
      if (!known.has(path)) {
        const near = nearest(path, siblings);
        throw new VerificationOptionsError(
          name,
          `is not an option${near === undefined ? '' : ` (did you mean "${near}"?)`}`,
        );
      }
      if (groups.has(path) || groups.has(`${path}[]`)) visit(child, path, name);
    }
  };
  visit(options, '', '');
}

/** `a.b[].c` → `a.b[]`; `a` → ''. */
function parentOf(path: string): string {
  const cut = path.lastIndexOf('.');
  return cut < 0 ? '' : path.slice(0, cut);
}

/** The known sibling closest by edit distance, when close enough to be the intended one. */
function nearest(path: string, siblings: string[]): string | undefined {
  const key = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  let best: { name: string; distance: number } | undefined;
  for (const sibling of siblings) {
    const name = sibling.slice(sibling.lastIndexOf('.') + 1);
    const distance = editDistance(key, name.toLowerCase());
    if (!best || distance < best.distance) best = { name: sibling, distance };
  }
  return best && best.distance <= Math.max(2, Math.floor(key.length / 2)) ? best.name : undefined;
}

function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const next = [i];
    for (let j = 1; j <= b.length; j += 1)
      next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length]!;
}
