import { checkOptions } from '../core/option-rules.js';
import { checkKnownKeys } from './unknown-options.js';
import { VERIFICATION_OPTION_RULES } from './verification-options.rules.js';

/** What forRootAsync reads beside its factory, by group: the routes are declared at import, before it runs. */
const STATIC_KEYS: Readonly<Record<'routes' | 'webhooks', readonly string[]>> = {
  routes: ['prefix', 'enabled'],
  webhooks: ['enabled', 'path', 'decorators'],
};
/** The paths it reads: `name`, each group and each of its keys. */
const STATIC_PATHS: ReadonlySet<string> = new Set([
  'name',
  ...Object.entries(STATIC_KEYS).flatMap(([group, keys]) => [group, ...keys.map((key) => `${group}.${key}`)]),
]);
/** The module's own rules for those paths (each entry of `decorators` is checked as it is applied). */
const STATIC_RULES = VERIFICATION_OPTION_RULES.filter((rule) => STATIC_PATHS.has(rule.path));

/**
 * forRootAsync's static `routes`, `webhooks` and `name`, checked at import as forRoot's are at boot: a key that
 * is no option (a misspelt `decorator`) is refused naming the nearest, then what it reads is held to its rules.
 * Another option of the group (one object shared with the factory: `routes.allowedOrigins`) is left to the
 * factory's options, checked at boot.
 */
export function checkStaticRoutes(declaration: {
  routes?: unknown;
  webhooks?: unknown;
  name?: unknown;
}): void {
  checkKnownKeys(VERIFICATION_OPTION_RULES, declaration);
  checkOptions(STATIC_RULES, declaration);
}
