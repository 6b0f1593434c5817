import {
  Inject,
  Module,
  type DynamicModule,
  type InjectionToken,
  type Provider,
  type Type,
} from '@nestjs/common';
import { HttpAdapterHost, ModuleRef, ModulesContainer } from '@nestjs/core';
import { withApiClientDefaults } from '../api/api-client.options.js';
import { VerificationApiClient } from '../api/verification-api.client.js';
import { VerificationHandleCodec } from '../core/verification-handle.codec.js';
import { createVerificationController } from '../http/verification.controller.js';
import { loadOpenApiDocs } from '../http/openapi-decorators.js';
import { servedPath } from '../http/global-prefix.js';
import { ACCOUNT_EXPORTS, ACCOUNT_PROVIDERS } from '../account/account.providers.js';
import { createUpstreamRequestObserver } from '../observability/upstream-request.observer.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import { assertDistinctRoutes, servedBy } from './distinct-routes.js';
import { servedRoutesLines } from './served-routes.log.js';
import { PROTECTION_PROVIDERS } from '../protection/protection.providers.js';
import { RECORD_RETENTION_MS, SessionRecordRepository } from '../sessions/session-record.repository.js';
import { SubjectIndex } from '../sessions/subject-index.js';
import { StatusStreamHub } from '../http/status-stream.hub.js';
import { SessionRefresher } from '../sessions/session-refresher.js';
import { VerificationService } from '../verification/verification.service.js';
import { VERIFICATION_PROVIDERS } from '../verification/verification.providers.js';
import { VerificationReconciler } from '../sessions/verification.reconciler.js';
import { VerificationTracker } from '../sessions/verification.tracker.js';
import { isVerificationStore, openStore } from '../store/create-store.js';
import { VerificationStore } from '../store/verification-store.interface.js';
import { RESOLVED_VERIFICATION_OPTIONS } from '../options/verification-options.tokens.js';
import {
  ConfigurableVerificationModule,
  VERIFICATION_MODULE_OPTIONS,
  type VerificationModuleAsyncBase,
  type VerificationModuleRootOptions,
} from './verification.module-definition.js';
import {
  declaredAsyncRoutes,
  declaredRoutes,
  optionWarnings,
  resolveVerificationOptions,
  type ResolvedVerificationOptions,
  type RouteSettings,
  type RoutesOptions,
  type VerificationModuleOptions,
  type WebhookRouteOptions,
} from '../options/verification.options.js';
import { keepsRawJsonBody, rawBodyMissingAtBoot } from '../webhooks/raw-body-probe.js';
import { createWebhookController } from '../webhooks/webhook.controller.js';
import { WebhookReceiver } from '../webhooks/webhook-receiver.js';
import { WebhookNotices } from '../webhooks/webhook-notices.js';
import { VerifiedPhoneClaims } from '../guard/verified-phone-claims.js';
import { VerifiedPhoneGuard } from '../guard/verified-phone.guard.js';
import { PhoneChange } from '../guard/phone-change.js';
import { GuardReadMeter } from '../guard/guard-read-meter.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import { UsageReads } from '../ledger/usage-reads.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import { VerificationOpsPage } from '../ops/verification-ops-page.service.js';
import { VerificationErasure } from '../verification/verification-erasure.js';
import {
  getVerificationToken,
  registrationScopedStore,
  registrationStore,
} from './verification-registration.js';
import { TestNumberApiClient } from '../test-numbers/test-number-api.client.js';
import { TestNumberSessions } from '../test-numbers/test-number-sessions.js';

/** forRootAsync: the factory gives the options; route paths are given here, statically. */
export type VerificationModuleAsyncOptions = VerificationModuleAsyncBase & {
  /** Prefix and switch of the client routes (default `verification`, on); their other options come from the factory. */
  routes?: Pick<RoutesOptions, 'prefix' | 'enabled'>;
  /** The webhook route (default off here: give `{ enabled: true }` when the factory sets a secret). */
  webhooks?: WebhookRouteOptions;
  /** The registration's name (see VerificationModuleOptions.name), given statically: its tokens are made at import. */
  name?: string;
};

const PROVIDERS: Provider[] = [
  {
    provide: VerificationStore,
    // Async: a store opened from a URL fails the boot when no Redis client library is installed.
    // On the module's one clock (`options.clock`), which the services and the webhook tolerance read too.
    // A named registration on a prefix or store the host chose keeps its own state under its name.
    useFactory: async (options: ResolvedVerificationOptions) =>
      registrationScopedStore(
        await openStore(registrationStore(options.store, options.name), options.clock),
        options.store,
        options.name,
      ),
    inject: [RESOLVED_VERIFICATION_OPTIONS],
  },
  ...ACCOUNT_PROVIDERS,
  {
    provide: VerificationApiClient,
    // With test numbers, their sessions are played by the module and never reach the API.
    useFactory: (
      options: ResolvedVerificationOptions,
      { logger, metrics }: VerificationTelemetry,
      store: VerificationStore,
    ): VerificationApiClient => {
      // Checked at boot with the client's own rules (under `api.`): the client takes them as they are.
      const apiOptions = withApiClientDefaults({
        ...options.api,
        // Upstream latency and errors by operation, for the operator's logs and metrics.
        onRequest: createUpstreamRequestObserver(logger, metrics),
      });
      return options.testNumbers.numbers.length > 0
        ? new TestNumberApiClient(apiOptions, new TestNumberSessions(options, store))
        : new VerificationApiClient(apiOptions);
    },
    inject: [RESOLVED_VERIFICATION_OPTIONS, VerificationTelemetry, VerificationStore],
  },
  {
    // The registration's one codec of handles and journey tokens (and its cache of opened handles).
    provide: VerificationHandleCodec,
    useFactory: (options: ResolvedVerificationOptions) =>
      new VerificationHandleCodec(options.handleKey, options.name),
    inject: [RESOLVED_VERIFICATION_OPTIONS],
  },
  {
    // Which sessions name a number or an owner: written by the records, read by erasure and the claims.
    provide: SubjectIndex,
    useFactory: (options: ResolvedVerificationOptions, store: VerificationStore) =>
      new SubjectIndex(store, options.dataKeys, RECORD_RETENTION_MS),
    inject: [RESOLVED_VERIFICATION_OPTIONS, VerificationStore],
  },
  SessionRecordRepository,
  VerificationTracker,
  StatusStreamHub,
  SessionRefresher,
  ...PROTECTION_PROVIDERS,
  ...VERIFICATION_PROVIDERS,
  VerificationReconciler,
  WebhookNotices,
  WebhookReceiver,
  VerifiedPhoneClaims,
  GuardReadMeter,
  VerifiedPhoneGuard,
  PhoneChange,
  VerificationHistory,
  VerificationErasure,
  UsageReads,
  VerificationLedger,
  VerificationOpsPage,
];

const EXPORTS = [
  VerificationService,
  VerificationReconciler,
  VerificationApiClient,
  VerificationStore,
  RESOLVED_VERIFICATION_OPTIONS,
  VerifiedPhoneClaims,
  // The guard is made where the host's controller lives, from these exports.
  GuardReadMeter,
  VerifiedPhoneGuard,
  PhoneChange,
  VerificationHistory,
  VerificationErasure,
  VerificationLedger,
  VerificationOpsPage,
  ...ACCOUNT_EXPORTS,
];

function controllersFor(settings: RouteSettings): Type[] {
  const { routes, webhooks, name } = settings;
  return [
    ...(routes.enabled
      ? [servedBy(createVerificationController(routes.prefix, name), name, routes.prefix)]
      : []),
    ...(webhooks.enabled
      ? [servedBy(createWebhookController(webhooks.path, webhooks.decorators), name, webhooks.path)]
      : []),
  ];
}

/**
 * The builder's definition (options provider, `global`) plus the controllers, providers and exports.
 * A named registration exports its services only under tokens carrying its name, from a global module:
 * two registrations never offer the same token, and any module can inject either by name.
 */
function withModuleParts(base: DynamicModule, settings: RouteSettings): DynamicModule {
  const { name } = settings;
  const named = name === undefined ? [] : EXPORTS.map((token) => namedAlias(token, name));
  return {
    ...base,
    module: VerificationModule,
    ...(name === undefined ? {} : { global: true }),
    controllers: controllersFor(settings),
    providers: [
      ...(base.providers ?? []),
      {
        provide: RESOLVED_VERIFICATION_OPTIONS,
        // Checked and completed once, against the routes declared at import. The routes' OpenAPI
        // metadata is applied first when @nestjs/swagger (an optional peer) is installed: awaited at
        // boot, so before any host builds its document.
        useFactory: async (raw: VerificationModuleOptions): Promise<ResolvedVerificationOptions> => {
          await loadOpenApiDocs();
          return resolveVerificationOptions(raw, settings);
        },
        inject: [VERIFICATION_MODULE_OPTIONS],
      },
      ...PROVIDERS,
      ...named,
    ],
    exports: name === undefined ? EXPORTS : named.map((alias) => alias.provide),
  };
}

function namedAlias(
  token: InjectionToken,
  name: string,
): { provide: InjectionToken; useExisting: InjectionToken } {
  return { provide: getVerificationToken(token, name), useExisting: token };
}

/** `VerificationModule.forFeature(name)`: a named registration's exports under their usual tokens. */
@Module({})
class VerificationFeatureModule {}

/**
 * Phone-number verification for a NestJS app: the typed API client, VerificationService, the
 * client routes (start, check, status, methods) and the webhook route. Requires
 * `EventEmitterModule.forRoot()` in the host app.
 */
@Module({})
export class VerificationModule {
  /**
   * @internal Made by Nest, once per registration. The registration's boot and shutdown are this
   * class's: the options that boot but look like a mistake are logged here, once (`optionWarnings`).
   */
  constructor(
    @Inject(RESOLVED_VERIFICATION_OPTIONS) private readonly options: ResolvedVerificationOptions,
    @Inject(VerificationStore) private readonly store: VerificationStore,
    private readonly telemetry: VerificationTelemetry,
    private readonly moduleRef: ModuleRef,
    modules: ModulesContainer,
    private readonly adapterHost: HttpAdapterHost,
  ) {
    assertDistinctRoutes(modules);
    for (const warning of optionWarnings(options)) telemetry.logger.warn(warning);
  }

  /**
   * @internal Logs the URLs served, once the host has set its global prefix (see `servedRoutesLines`),
   * and warns when the webhook route is served by an app whose JSON parser drops the raw bytes (no
   * `rawBody: true`): said at boot, not first seen as the first delivery's 503.
   */
  async onApplicationBootstrap(): Promise<void> {
    for (const line of servedRoutesLines(this.options, this.moduleRef)) this.telemetry.logger.log(line);
    if (this.options.webhooks.enabled && (await keepsRawJsonBody(this.adapterHost.httpAdapter)) === false)
      this.telemetry.logger.warn(
        rawBodyMissingAtBoot(servedPath(this.moduleRef, this.options.webhooks.path)),
      );
  }

  /** @internal Closes the store when the module created it (never a store or client the host gave). */
  async onApplicationShutdown(): Promise<void> {
    if (!isVerificationStore(this.options.store)) await this.store.close();
  }

  // Nest's module builder makes the options providers; the module is this class (withModuleParts),
  // which does not extend the builder's so that no builder type reaches the public API.
  static forRoot(options: VerificationModuleRootOptions): DynamicModule {
    return withModuleParts(ConfigurableVerificationModule.forRoot(options), declaredRoutes(options));
  }

  static forRootAsync(options: VerificationModuleAsyncOptions): DynamicModule {
    const { routes, webhooks, name, ...asyncOptions } = options;
    return withModuleParts(
      ConfigurableVerificationModule.forRootAsync(asyncOptions),
      declaredAsyncRoutes(routes, webhooks, name),
    );
  }

  /**
   * Binds the importing (feature) module to the named registration `name`: there, VerificationService,
   * VerificationAccountService, VerificationStore, the guard and the rest resolve to that registration's,
   * as with a single unnamed registration. The registration itself is `forRoot({ name, … })` once.
   */
  static forFeature(name: string): DynamicModule {
    return {
      module: VerificationFeatureModule,
      providers: EXPORTS.map((token) => ({ provide: token, useExisting: getVerificationToken(token, name) })),
      exports: EXPORTS,
    };
  }
}
