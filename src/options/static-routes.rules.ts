import { checkOptions, isObject, VerificationOptionsError } from '../core/option-rules.js';
import { VERIFICATION_OPTION_RULES } from './verification-options.rules.js';

/**
 * What forRootAsync takes beside its factory, by group: the routes are declared at import, before the
 * factory runs, so any other key there would be dropped without a word (a misspelt `decorator`, a `secret`).
 */
const STATIC_KEYS: Readonly<Record<'routes' | 'webhooks', readonly string[]>> = {
  routes: ['prefix', 'enabled'],
  webhooks: ['enabled', 'path', 'decorators'],
};
/** The paths it takes: `name`, each group and each of its keys. */
const STATIC_PATHS: ReadonlySet<string> = new Set([
  'name',
  ...Object.entries(STATIC_KEYS).flatMap(([group, keys]) => [group, ...keys.map((key) => `${group}.${key}`)]),
]);
/** The module's own rules for those paths (each entry of `decorators` is checked as it is applied). */
const STATIC_RULES = VERIFICATION_OPTION_RULES.filter((rule) => STATIC_PATHS.has(rule.path));

/** forRootAsync's static `routes`, `webhooks` and `name`, checked at import: unknown keys, then each rule. */
export function checkStaticRoutes(declaration: {
  routes?: unknown;
  webhooks?: unknown;
  name?: unknown;
}): void {
  for (const [group, keys] of Object.entries(STATIC_KEYS)) {
    const value = declaration[group as keyof typeof STATIC_KEYS];
    if (!isObject(value)) continue;
    for (const key of Object.keys(value))
      if (!keys.includes(key))
        throw new VerificationOptionsError(
          `${group}.${key}`,
          `is not taken beside the factory: forRootAsync({ ${group}: { ${keys.join(', ')} } }) statically, the rest from useFactory`,
        );
  }
  checkOptions(STATIC_RULES, declaration);
}
