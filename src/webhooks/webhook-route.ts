import {
  VerificationOptionsError,
  type ResolvedVerificationOptions,
  type VerificationModuleOptions,
  type WebhookOptions,
} from '../options/verification.options.js';

/** The webhook route as declared when the module is imported: the controller path and whether it exists. */
export interface WebhookRouteSettings {
  enabled: boolean;
  /** Controller path without leading or trailing slashes, e.g. `verification/webhooks`. */
  path: string;
}

/** Static webhook route settings of `forRootAsync` (the secret comes from the factory). */
export interface WebhookRouteOptions {
  /** Declare the webhook route. Default false: an async factory's secrets are unknown at import. */
  enabled?: boolean;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: WebhookOptions['path'];
}

const trimSlashes = (path: string): string => path.replace(/^\/+|\/+$/g, '');

/** `webhooks.path` under the client routes' prefix, or on its own when it starts with `/`. */
export function webhookRoutePath(prefix: string, path: string | undefined): string {
  const given = path ?? 'webhooks';
  if (given.startsWith('/')) return trimSlashes(given);
  const parent = trimSlashes(prefix);
  return parent === '' ? trimSlashes(given) : `${parent}/${trimSlashes(given)}`;
}

/** forRoot: the route exists when webhooks are configured (a secret, a verifier or `signature: 'none'`) and not switched off. */
export function webhookRouteFromOptions(
  options: VerificationModuleOptions,
  prefix: string,
): WebhookRouteSettings {
  const webhooks = options.webhooks ?? {};
  const hasSecret = Array.isArray(webhooks.secret)
    ? webhooks.secret.length > 0
    : webhooks.secret !== undefined;
  const configured = hasSecret || webhooks.verifier !== undefined || webhooks.signature === 'none';
  return { enabled: (webhooks.enabled ?? true) && configured, path: webhookRoutePath(prefix, webhooks.path) };
}

/** forRootAsync: only what was given statically. */
export function webhookRouteFromStatic(
  route: WebhookRouteOptions | undefined,
  prefix: string,
): WebhookRouteSettings {
  return { enabled: route?.enabled ?? false, path: webhookRoutePath(prefix, route?.path) };
}

/**
 * The factory's options must agree with the route declared at import: a configured webhook
 * receiver without a route (or a route without a way to check signatures) fails the boot with
 * what to change, instead of answering 404 or 401 to every event later.
 */
export function assertWebhookRouteMatches(
  raw: VerificationModuleOptions,
  resolved: ResolvedVerificationOptions,
  route: WebhookRouteSettings,
  prefix: string,
): void {
  if (resolved.webhooks.enabled && !route.enabled)
    throw new VerificationOptionsError(
      'webhooks.enabled',
      'must be given statically when the factory configures webhooks: forRootAsync({ webhooks: { enabled: true, path? }, useFactory }) (routes are declared at import)',
    );
  // A factory may switch a declared route off from configuration (`webhooks: { enabled: false }`):
  // the route then answers 404 and the reconciler polls at the spec's pace.
  if (route.enabled && !resolved.webhooks.enabled && raw.webhooks?.enabled !== false)
    throw new VerificationOptionsError(
      'webhooks.secret',
      'is required: the webhook route is declared (webhooks.enabled) but no secret, verifier or signature: "none" was given (or return webhooks: { enabled: false } to switch it off)',
    );
  if (raw.webhooks?.path !== undefined && webhookRoutePath(prefix, raw.webhooks.path) !== route.path)
    throw new VerificationOptionsError(
      'webhooks.path',
      'must be given statically: forRootAsync({ webhooks: { enabled: true, path }, useFactory }) (routes are declared at import)',
    );
  if (
    resolved.webhooks.signature === 'none' &&
    (resolved.webhooks.secrets.length > 0 || resolved.webhooks.verifier)
  )
    throw new VerificationOptionsError(
      'webhooks.signature',
      'is "none" while a secret or verifier is given: remove one of them',
    );
  if (resolved.webhooks.signature === 'none' && !resolved.webhooks.confirmWithApi)
    throw new VerificationOptionsError(
      'webhooks.confirmWithApi',
      'cannot be false with signature: "none": unsigned webhooks would be believed as they are',
    );
}
