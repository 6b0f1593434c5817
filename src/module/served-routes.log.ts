import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { VerificationLogger } from '../observability/verification-logger.js';
import {
  RESOLVED_VERIFICATION_OPTIONS,
  VERIFICATION_ROUTE_SETTINGS,
} from '../options/verification-options.tokens.js';
import type { ResolvedVerificationOptions, RouteSettings } from '../options/verification.options.js';

/** What the log reads of Nest's container: the app's global prefix (`app.setGlobalPrefix`). */
interface WithApplicationConfig {
  container?: { applicationConfig?: { getGlobalPrefix?(): unknown } };
}

/**
 * Logs at boot the URLs the module serves, with the app's global prefix applied: a host that calls
 * `app.setGlobalPrefix('api')` sees that its webhook moved to `/api/verification/webhooks` (the API's
 * webhook URL must say so) and that its frontend's base URL is `/api/verification`. At bootstrap,
 * because the prefix is set between `NestFactory.create` and `listen`.
 */
@Injectable()
export class ServedRoutesLog implements OnApplicationBootstrap {
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VERIFICATION_ROUTE_SETTINGS) private readonly declared: RouteSettings,
    private readonly logger: VerificationLogger,
    private readonly moduleRef: ModuleRef,
  ) {}

  onApplicationBootstrap(): void {
    const prefix = this.globalPrefix();
    const under = (path: string) => `/${[prefix, path].filter((part) => part !== '').join('/')}`;
    if (this.options.routes.enabled && this.declared.routes.enabled) {
      const base = under(this.declared.routes.prefix);
      const stream = this.options.statusStream.enabled ? `, GET ${base}/status/:verification_id/events` : '';
      this.logger.log(
        `client routes at ${base}: POST ${base}/start, POST ${base}/check, GET ${base}/status/:verification_id${stream}, POST ${base}/switch, POST ${base}/cancel, GET ${base}/methods (the browser client's baseUrl is ${base})`,
      );
    }
    if (this.options.webhooks.enabled && this.declared.webhooks.enabled)
      this.logger.log(
        `webhook route at POST ${under(this.declared.webhooks.path)} (the URL to give the API)`,
      );
  }

  /**
   * The global prefix, without slashes, or '' when none is set or it cannot be read: Nest keeps it in
   * its container's application config, which a module reaches only through its ModuleRef.
   */
  private globalPrefix(): string {
    try {
      const prefix = (
        this.moduleRef as unknown as WithApplicationConfig
      ).container?.applicationConfig?.getGlobalPrefix?.();
      return typeof prefix === 'string' ? prefix.replace(/^\/+|\/+$/g, '') : '';
    } catch {
      return '';
    }
  }
}
