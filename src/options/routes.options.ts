// The options of the webhook route and the client routes, given and resolved.

/** Verifies a webhook request's signature over its raw bytes. Throws or returns false when it does not hold. */
export interface WebhookVerifier {
  verify(rawBody: Buffer, headers: Record<string, string | string[] | undefined>): boolean | Promise<boolean>;
}

export interface WebhookOptions {
  /** `whsec_…` secret(s) for the default Standard Webhooks verifier; several at once during rotation. */
  secret?: string | string[];
  /** A host's own verifier, for another scheme. */
  verifier?: WebhookVerifier;
  /** `'none'` runs without signature checks (logs a warning at boot). Default `'standard-webhooks'`. */
  signature?: 'standard-webhooks' | 'none';
  /** Timestamp tolerance. Default 300 s. */
  toleranceSeconds?: number;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: string;
  /** Serve the webhook route. Default true when a secret, verifier or `signature: 'none'` is set. */
  enabled?: boolean;
  /** Confirm each webhook with `GET /v1/verify/{id}` before emitting. Default true. */
  confirmWithApi?: boolean;
  /**
   * The host's class decorators applied to the webhook controller when it is declared (at import),
   * such as `SkipThrottle()` of `@nestjs/throttler`. Under forRootAsync, give them in its static
   * `webhooks`. Default none.
   */
  decorators?: ClassDecorator[];
}

/** Static webhook route settings of `forRootAsync` (the secret comes from the factory). */
export interface WebhookRouteOptions {
  /** Declare the webhook route. Default false: an async factory's secrets are unknown at import. */
  enabled?: boolean;
  /** Path under the routes' prefix (default `webhooks`), or absolute when it starts with `/`. */
  path?: WebhookOptions['path'];
  /** Class decorators for the webhook controller (see WebhookOptions.decorators). */
  decorators?: ClassDecorator[];
}

export interface RoutesOptions {
  /** Prefix of the client routes. Default `verification`. */
  prefix?: string;
  /** Serve the client routes (start, check, status, methods). Default true. */
  enabled?: boolean;
  /**
   * Origins (`https://shop.example`) whose pages may call the body routes cross-site: a request
   * whose `Sec-Fetch-Site` is `cross-site` is refused (403 `cross_site_request`) unless its `Origin`
   * is listed. Default none.
   */
  allowedOrigins?: string[];
  /** Largest request body the body routes accept, in bytes (413 `payload_too_large` above). Default 4096. */
  bodyLimit?: number;
}

export interface ResolvedRoutes {
  prefix: string;
  enabled: boolean;
  /** Serialised origins (`scheme://host[:port]`). */
  allowedOrigins: string[];
  bodyLimit: number;
}

/** Route paths, fixed when the module is imported (controllers are declared then). */
export interface RouteSettings {
  /** The client routes: prefix without leading or trailing slashes (`verification`), and whether they are served. */
  routes: { prefix: string; enabled: boolean };
  /** The webhook route: whether it is declared, and its controller path (`verification/webhooks`). */
  webhooks: { enabled: boolean; path: string; decorators: ClassDecorator[] };
  /** The registration's name, declared at import (its injection tokens are made then). */
  name?: string;
}
