/**
 * How the options meet the routes: the client routes' prefix and the webhook path as declared, whether
 * the webhook receiver runs, and the rules that hold a factory's options (forRootAsync) against the
 * routes declared at import.
 */
import type { OptionRule } from '../core/option-rules.js';
import { VERIFICATION_DEFAULTS } from './verification-options.defaults.js';
import type { RouteSettings, WebhookOptions } from './verification.options.js';

/** Prefix of the routes or a webhook path: without leading or trailing slashes. */
export const trimSlashes = (path: string): string => path.replace(/^\/+|\/+$/g, '');

/** `webhooks.secret` as a list (one secret, several during rotation, or none). */
export function webhookSecrets(webhooks: WebhookOptions | null | undefined): string[] {
  const secret = webhooks?.secret;
  return secret === undefined ? [] : Array.isArray(secret) ? secret : [secret];
}

/** True when the webhook receiver can check (or is told not to check) signatures. */
export function webhooksConfigured(webhooks: WebhookOptions | null | undefined): boolean {
  return (
    webhookSecrets(webhooks).length > 0 || webhooks?.verifier !== undefined || webhooks?.signature === 'none'
  );
}

/** Whether the webhook receiver runs: configured and not switched off. */
export function webhooksEnabled(webhooks: WebhookOptions | null | undefined): boolean {
  return (webhooks?.enabled ?? true) && webhooksConfigured(webhooks);
}

/**
 * Rules that hold the options against the routes declared at import (forRootAsync declares them
 * before its factory runs): a configured receiver without a route, or a route without a way to
 * check signatures, fails the boot with what to change, instead of answering 404 or 401 later.
 */
export function declaredRouteRules(declared: RouteSettings): OptionRule[] {
  const staticHint = (what: string) =>
    `must be given statically: forRootAsync({ ${what}, useFactory }) (routes are declared at import)`;
  return [
    {
      // The registration's injection tokens are made at import: the factory cannot rename it.
      path: 'name',
      checks: [(v) => (v === declared.name ? undefined : staticHint('name'))],
    },
    {
      path: 'routes.prefix',
      checks: [
        (v) =>
          trimSlashes(v as string) === declared.routes.prefix ? undefined : staticHint('routes: { prefix }'),
      ],
    },
    {
      path: 'webhooks.enabled',
      always: true,
      checks: [
        (_, { root }) =>
          webhooksEnabled(root.webhooks as WebhookOptions | undefined) && !declared.webhooks.enabled
            ? 'must be given statically when the factory configures webhooks: forRootAsync({ webhooks: { enabled: true, path? }, useFactory }) (routes are declared at import)'
            : undefined,
      ],
    },
    {
      // A factory may switch a declared route off (`webhooks: { enabled: false }`): it then answers 404.
      path: 'webhooks.secret',
      always: true,
      checks: [
        (_, { root }) => {
          const webhooks = root.webhooks as WebhookOptions | undefined;
          return declared.webhooks.enabled && !webhooksEnabled(webhooks) && webhooks?.enabled !== false
            ? 'is required: the webhook route is declared (webhooks.enabled) but no secret, verifier or signature: "none" was given (or return webhooks: { enabled: false } to switch it off)'
            : undefined;
        },
      ],
    },
    {
      // Applied to the controller at import: a decorator only the factory gives would never be.
      path: 'webhooks.decorators',
      checks: [
        (v) => {
          const given = declared.webhooks.decorators;
          if (!Array.isArray(v) || v.every((d) => given.includes(d as ClassDecorator))) return undefined;
          // Declared too, but as other functions: each SkipThrottle() call makes a new one.
          return given.length > 0
            ? 'holds decorators other than the ones given statically (each call of a decorator factory makes a new one): only those are applied, at import; leave webhooks.decorators out of the factory, or return that same array'
            : staticHint('webhooks: { enabled: true, decorators }');
        },
      ],
    },
    {
      path: 'webhooks.path',
      checks: [
        (v) =>
          webhookRoutePath(declared.routes.prefix, v as string) === declared.webhooks.path
            ? undefined
            : staticHint('webhooks: { enabled: true, path }'),
      ],
    },
  ];
}

/** The client routes' prefix as given (or the default), without leading or trailing slashes. */
export function resolvePrefix(options: { routes?: { prefix?: string } | null }): string {
  return trimSlashes(options.routes?.prefix ?? VERIFICATION_DEFAULTS.routes.prefix);
}

/** `webhooks.path` under the client routes' prefix, or on its own when it starts with `/`. */
export function webhookRoutePath(prefix: string, path: string | undefined): string {
  const given = path ?? VERIFICATION_DEFAULTS.webhooks.path;
  if (given.startsWith('/')) return trimSlashes(given);
  return prefix === '' ? trimSlashes(given) : `${prefix}/${trimSlashes(given)}`;
}
