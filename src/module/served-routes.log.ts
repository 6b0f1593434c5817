import type { ModuleRef } from '@nestjs/core';
import { servedPath } from '../http/global-prefix.js';
import type { ResolvedVerificationOptions } from '../options/verification.options.js';

/**
 * The lines logged at boot naming the URLs the module serves, with the app's global prefix applied: a
 * host that calls `app.setGlobalPrefix('api')` sees that its webhook moved to `/api/verification/webhooks`
 * (the API's webhook URL must say so) and that its frontend's base URL is `/api/verification`. Read at
 * bootstrap, because the prefix is set between `NestFactory.create` and `listen`.
 */
export function servedRoutesLines(options: ResolvedVerificationOptions, moduleRef: ModuleRef): string[] {
  const under = (path: string) => servedPath(moduleRef, path);
  const lines: string[] = [];
  // The resolved routes are those declared at import (a factory cannot move them: the rules refuse it).
  if (options.routes.enabled) {
    const base = under(options.routes.prefix);
    const stream = options.statusStream.enabled ? `, GET ${base}/status/:verification_id/events` : '';
    lines.push(
      `client routes at ${base}: POST ${base}/start, POST ${base}/check, GET ${base}/status/:verification_id${stream}, POST ${base}/switch, POST ${base}/cancel, GET ${base}/methods (the browser client's baseUrl is ${base})`,
    );
  }
  if (options.webhooks.enabled)
    lines.push(`webhook route at POST ${under(options.webhooks.path)} (the URL to give the API)`);
  return lines;
}
