import type { ResolvedVerificationOptions } from '../options/verification.options.js';
import type { OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { EventEmitter2 } from '@nestjs/event-emitter';
import type { Money } from '../api/api.types.js';
import { VerificationApiError } from '../api/verification-api.error.js';
import {
  isEventOf,
  VerificationEventName,
  type BalanceEvent,
  type FallbackMomentEvent,
  type FraudSuspectedEvent,
  type LedgerDriftEvent,
  type SpendCapReachedEvent,
  type VerificationEvent,
  type VerificationEventType,
} from '../core/verification-events.js';
import { VerificationClientError, VerificationError } from '../core/verification.errors.js';
import type { LogFields } from './log-redaction.js';
import { refusalReason } from '../core/refusal-reason.js';
import { VerificationLogger } from './verification-logger.js';
import { VerificationMetrics } from './verification-metrics.js';
import {
  VerificationTracing,
  type SpanFacts,
  type TraceSpan,
  type TracedOperation,
} from './verification-tracing.js';
import { errorText } from '../core/error-text.js';

/** What telemetry reads of a session (a SessionRecord fits). */
export interface ObservedSession {
  requestId: string;
  phoneNumber: string;
  method: string;
  status: string;
  cost?: Money;
}

/** Context of a refused or failed route call, as far as it is known when it failed. */
export interface RouteFailureContext {
  method?: string;
  phoneNumber?: string;
  requestId?: string;
  latencyMs: number;
}

/** An ops event: about the account or the money, not one session. */
export type OpsEvent =
  SpendCapReachedEvent | FraudSuspectedEvent | BalanceEvent | LedgerDriftEvent | FallbackMomentEvent;

const TERMINAL_EVENTS: readonly VerificationEventType[] = [
  VerificationEventName.verified,
  VerificationEventName.failed,
  VerificationEventName.expired,
];

/**
 * The module's observability, one provider: its logger and metrics, which every part writes to, and
 * what the routes, the webhook route, the reconciler and the tracker's events tell the operator: one
 * log line per meaningful event (with route, method, masked phone, short ids, error_code, latency),
 * the matching metrics, and each operation's span (VerificationTracing). The parts of the module that
 * do the work call it; it never changes an outcome.
 */
export class VerificationTelemetry implements OnModuleInit, OnModuleDestroy {
  readonly #listeners: [string, (event: VerificationEvent) => void][] = [];
  readonly #tracing = new VerificationTracing();

  constructor(
    /** The module's one logger (redacted lines, `logLevels`). */
    readonly logger: VerificationLogger,
    /** The module's metrics (no-ops unless `metrics.enabled`). */
    readonly metrics: VerificationMetrics,
    private readonly emitter?: EventEmitter2,
    private readonly options?: ResolvedVerificationOptions,
  ) {}

  /** The registration's telemetry: its logger, and its metrics (prom-client is loaded only when they are on). */
  static async create(
    options: ResolvedVerificationOptions,
    emitter?: EventEmitter2,
  ): Promise<VerificationTelemetry> {
    return new VerificationTelemetry(
      new VerificationLogger(options),
      await VerificationMetrics.create(options.metrics),
      emitter,
      options,
    );
  }

  /**
   * Outcomes are counted from the events: the tracker emits each `(request_id, event)` once per
   * deployment. The tracer is loaded once, here (see VerificationTracing).
   */
  async onModuleInit(): Promise<void> {
    await this.#tracing.load();
    if (!this.emitter) return;
    for (const name of [...TERMINAL_EVENTS, VerificationEventName.codeRequired]) {
      const listener = (event: VerificationEvent) => this.#outcome(event);
      this.emitter.on(name, listener);
      this.#listeners.push([name, listener]);
    }
  }

  /** Runs `operation` in its span, the active one while it runs (see VerificationTracing). */
  span<T>(name: TracedOperation, operation: (span: TraceSpan) => Promise<T>, facts?: SpanFacts): Promise<T> {
    return this.#tracing.span(name, operation, facts);
  }

  onModuleDestroy(): void {
    for (const [name, listener] of this.#listeners.splice(0)) this.emitter?.off(name, listener);
  }

  /**
   * Emits an ops event (`verification.spend_cap_reached`, `verification.fraud_suspected`,
   * `verification.balance_low`, `verification.ledger_drift`, …) with the registration's name. Never
   * rejects: a failing listener is logged by its error's name only (its message is the host's data).
   * Protection does not await it (a slow alerting listener must not hold the refused request).
   */
  announce(event: OpsEvent): Promise<void> {
    const name = this.options?.name;
    const payload = name === undefined ? event : { ...event, registration: name };
    let heard: Promise<unknown>;
    try {
      heard = this.emitter?.emitAsync(event.event, payload) ?? Promise.resolve();
    } catch (error) {
      // emitAsync calls each listener at once: one that throws there throws out of it.
      heard = Promise.reject(error);
    }
    return heard
      .then(() => undefined)
      .catch((error: unknown) => {
        this.logger.error(`a ${event.event.replace('verification.', '')} listener failed`, {
          error: error instanceof Error ? error.name : 'unknown',
        });
      });
  }

  /**
   * A start answered: a new, paid upstream session, or the caller's pending one handed back. A
   * journey's switch (`route: 'switch'`) is a paid start of its own.
   */
  started(
    session: ObservedSession,
    coalesced: boolean,
    latencyMs: number,
    route: 'start' | 'switch' = 'start',
  ): void {
    if (!coalesced) {
      this.metrics.started(session.method);
      this.metrics.spent(session.method, session.cost);
    }
    this.logger.log(route, {
      route,
      method: session.method,
      phone: session.phoneNumber,
      request_id: session.requestId,
      status: session.status,
      coalesced,
      latency_ms: latencyMs,
    });
  }

  /** A start (or a journey's switch) refused (limits, allowlists, hook, bad input) or failed (upstream). */
  startFailed(error: unknown, context: RouteFailureContext, route: 'start' | 'switch' = 'start'): void {
    const reason = refusalReason(error);
    if (reason) this.metrics.refused(reason);
    this.#failure(route, error, {
      route,
      method: context.method,
      phone: context.phoneNumber,
      reason,
      latency_ms: context.latencyMs,
    });
  }

  /** A journey canceled by its frontend (`session`: its current one). */
  canceled(session: ObservedSession, steps: number): void {
    this.logger.log('cancel', {
      route: 'cancel',
      method: session.method,
      request_id: session.requestId,
      status: session.status,
      steps,
    });
  }

  /** A code check answered. */
  checked(session: ObservedSession, latencyMs: number): void {
    this.logger.log('check', {
      route: 'check',
      method: session.method,
      request_id: session.requestId,
      status: session.status,
      verified: session.status === 'verified',
      latency_ms: latencyMs,
    });
  }

  /** A code check refused (wrong code, not pending, limits) or failed. */
  checkFailed(error: unknown, context: RouteFailureContext): void {
    this.#failure('check', error, {
      route: 'check',
      method: context.method,
      request_id: context.requestId,
      latency_ms: context.latencyMs,
    });
  }

  /** A failure that is not one of the package's errors (store down, a bug) on `route`; refusals are not logged here. */
  unexpectedFailure(route: string, error: unknown): void {
    if (error instanceof VerificationError) return;
    this.logger.error(`${route} failed`, {
      route,
      error: errorText(error),
    });
  }

  /** A status poll answered (debug: frontends poll every few seconds). */
  statusServed(session: ObservedSession, latencyMs: number): void {
    // Once per poll: the fields are not even built unless debug lines are written.
    if (!this.logger.isLevelEnabled('debug')) return;
    this.logger.debug('status', {
      route: 'status',
      method: session.method,
      request_id: session.requestId,
      status: session.status,
      latency_ms: latencyMs,
    });
  }

  /** A status poll answered from the last known state because the API could not be asked. */
  statusServedStale(session: ObservedSession, error: unknown): void {
    this.logger.warn('status served from the last known state', {
      route: 'status',
      method: session.method,
      request_id: session.requestId,
      ...upstreamFields(error),
    });
  }

  /**
   * One webhook request handled by the webhook route. `result` is a short word such as `processed`,
   * `duplicate`, `ignored`, `invalid_signature`, `stale`, `failed`.
   */
  webhookHandled(
    result: string,
    context: {
      event?: string;
      requestId?: string;
      webhookId?: string;
      status?: number;
      latencyMs?: number;
    } = {},
  ): void {
    this.metrics.webhookEvent(result);
    const fields: LogFields = {
      route: 'webhook',
      result,
      event: context.event,
      request_id: context.requestId,
      webhook_id: context.webhookId,
      http_status: context.status,
      latency_ms: context.latencyMs,
    };
    if (result === 'failed') this.logger.warn('webhook', fields);
    else this.logger.log('webhook', fields);
  }

  #outcome(event: VerificationEvent): void {
    // Another registration's event (named registrations share the host's emitter): its own telemetry counts it.
    if (!isEventOf(event, this.options?.name)) return;
    try {
      if (TERMINAL_EVENTS.includes(event.event)) this.metrics.outcome(event.method, event.status);
      this.logger.log(event.event, {
        method: event.method,
        phone: event.phoneNumber,
        request_id: event.requestId,
        status: event.status,
        source: event.source,
      });
    } catch {
      // Telemetry never fails a listener chain (which would release the event's claim).
    }
  }

  /** `<route> refused` for a refusal the caller can act on, `<route> failed` when the module could not serve it. */
  #failure(route: string, error: unknown, fields: LogFields): void {
    if (!(error instanceof VerificationClientError)) {
      this.logger.error(`${route} failed`, {
        ...fields,
        error: errorText(error),
      });
      return;
    }
    const all: LogFields = {
      ...fields,
      error_code: error.errorCode,
      http_status: error.getStatus(),
      cause: typeof error.extra.reason === 'string' ? error.extra.reason.slice(0, 60) : undefined,
      attempts_remaining: numberOrUndefined(error.extra.attempts_remaining),
      session_status:
        typeof error.extra.verification_status === 'string' ? error.extra.verification_status : undefined,
    };
    if (error.errorCode === 'service_unavailable' && !fields.reason) this.logger.warn(`${route} failed`, all);
    else if (error.errorCode === 'validation_error') this.logger.debug(`${route} refused`, all);
    else this.logger.log(`${route} refused`, all);
  }
}

function upstreamFields(error: unknown): LogFields {
  if (error instanceof VerificationApiError)
    return { upstream_status: error.status, error: error.errorCode ?? `http_${error.status}` };
  if (error instanceof Error) return { error: error.message };
  return { error: 'unknown' };
}

function numberOrUndefined(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}
