import { Injectable } from '@nestjs/common';
import { MethodStats } from '../account/method-stats.service.js';
import { MethodHealthWatch } from '../account/method-health.service.js';
import { VerificationLedger } from '../ledger/verification-ledger.service.js';
import type { DeviceHint, JourneyStep } from '../core/journey.js';
import type { SessionRecord } from '../core/session-record.js';
import {
  asVerificationError,
  VerificationClientError,
  type VerificationError,
} from '../core/verification.errors.js';
import { figureGivers } from './figure-givers.js';
import { AssessmentRefusal } from '../protection/assess-start-hook.js';
import { VerificationHistory } from '../history/verification-history.service.js';
import type { VerificationHistoryEntry } from '../history/verification-history.types.js';
import { VerificationTelemetry } from '../observability/verification-telemetry.js';
import type { TraceSpan, TracedOperation } from '../observability/verification-tracing.js';

/** Refusals of a flow whose subject was erased while the API was asked, with the session a start paid for. */
const ERASED_MEANWHILE = new WeakMap<object, SessionRecord | undefined>();

/**
 * The answer of a start, switch or check whose number or owner was erased while the API was asked: as its
 * handle now is (404 `not_found`); FlowOutcomes.refused keeps nothing of it (`paid`: the session a start paid for).
 */
export function forgottenMeanwhile(paid?: SessionRecord): VerificationClientError {
  const error = new VerificationClientError('not_found');
  ERASED_MEANWHILE.set(error, paid);
  return error;
}

/** What a refused or failed flow knew when it stopped (for its log line and history entry). */
export interface FlowFacts {
  method?: string;
  phoneNumber?: string;
  requestId?: string;
  /** What the flow was for (`purpose`), once it was read. */
  purpose?: string;
  /** The client's IP: whose budget of refusal entries in history a refusal spends (figureGivers). */
  ip?: string;
  /** `Date.now()` when the flow began. */
  began: number;
}

/** A start or switch that went through. */
export interface StartOutcome {
  record: SessionRecord;
  /** The caller's pending session handed back (nothing paid). */
  resumed: boolean;
  owner: string | undefined;
  /** Who the method figures count it for (see `callerOf`). */
  caller: string | undefined;
  /** The journey's device hint, for the method figures. */
  device?: DeviceHint;
  /** The client's IP, for the method figures' givers (figureGivers). */
  ip?: string;
  /** A switch's: the journey's steps before it (the method figures end them when it verifies). */
  earlier?: readonly JourneyStep[];
  began: number;
}

/**
 * Where each flow records how it ended, once: its span, the operator's log line and metrics, the
 * number's history and the method figures. A failure is returned as the VerificationError the
 * caller throws (anything that is not one becomes a 503 `service_unavailable`, its cause logged).
 */
@Injectable()
export class FlowOutcomes {
  constructor(
    readonly telemetry: VerificationTelemetry,
    private readonly history: VerificationHistory,
    private readonly methodStats: MethodStats,
    private readonly ledger: VerificationLedger,
    private readonly health: MethodHealthWatch,
  ) {}

  /** Runs a flow in its span (see VerificationTelemetry.span). */
  span<T>(name: TracedOperation, flow: (span: TraceSpan) => Promise<T>): Promise<T> {
    return this.telemetry.span(name, flow);
  }

  async started(route: 'start' | 'switch', outcome: StartOutcome): Promise<void> {
    const { record, resumed, owner } = outcome;
    this.telemetry.started(record, resumed, Date.now() - outcome.began, route);
    await this.history.record({
      kind: route,
      phoneNumber: record.phoneNumber,
      owner,
      method: record.method,
      requestId: record.requestId,
      status: record.status,
      cost: record.cost ?? null,
      ...(record.purpose === undefined ? {} : { purpose: record.purpose }),
      ...(record.assessment === undefined ? {} : { assessment: record.assessment }),
      ...(resumed ? { resumed } : {}),
    });
    if (!resumed) {
      await this.ledger.count(record);
      // Counted after the answer: the figures' reads wait for it (MethodStats.tally).
      const { address, network } = figureGivers(outcome.caller, outcome.ip);
      // As known to the deployment too (this instance may never have read the prefix), off the answer's path.
      const unhealthy = this.health
        .counted(record.method, record.phoneNumber)
        .then((state) => state !== 'healthy');
      const givers = { address, network, unhealthy };
      void this.methodStats.tally(record, outcome.caller, outcome.device, givers, outcome.earlier);
    }
  }

  /** A status answer of `record`: a page follows it (evidence for the method figures). */
  followed(record: SessionRecord): Promise<void> {
    return this.methodStats.followed(record);
  }

  /** A code the API answered for, before the outcome it causes (the tracker's event writes its own entry). */
  async codeChecked(record: SessionRecord, status: string, owner: string | undefined): Promise<void> {
    const entry: Omit<VerificationHistoryEntry, 'at' | 'test'> = {
      kind: 'check',
      check: status === 'verified' ? 'right' : undefined,
      status,
      phoneNumber: record.phoneNumber,
      owner,
      method: record.method,
      requestId: record.requestId,
    };
    await this.history.record(entry);
  }

  /** A start, switch or check refused or failed: logged, counted and kept in the number's history. */
  async refused(
    route: 'start' | 'switch' | 'check',
    error: unknown,
    facts: FlowFacts,
    owner: string | undefined,
  ): Promise<VerificationError> {
    // Erased while the API was asked: nothing of the subject is kept (no history, no number in the log line).
    const erased = ERASED_MEANWHILE.has(error as object);
    if (erased) facts.phoneNumber = undefined;
    const context = { ...facts, latencyMs: Date.now() - facts.began };
    if (route === 'check') this.telemetry.checkFailed(error, context);
    else this.telemetry.startFailed(error, context, route);
    if (erased) {
      // A session a start paid for is still what the API charged.
      const paid = ERASED_MEANWHILE.get(error as object);
      if (paid !== undefined) await this.ledger.count(paid);
      return asVerificationError(error);
    }
    const { caller, address, network } = figureGivers(
      owner === undefined ? undefined : `owner:${owner}`,
      facts.ip,
    );
    const callers = [
      caller,
      address === undefined ? undefined : `address:${address}`,
      network === undefined ? undefined : `network:${network}`,
    ].filter((c): c is string => c !== undefined);
    const assessment = error instanceof AssessmentRefusal ? { assessment: error.assessment } : {};
    await this.history.refused(route, error, { ...facts, ...assessment }, owner, callers);
    return asVerificationError(error);
  }

  /** Any other flow's failure: a refusal as it is, anything else logged and made a 503 (see asVerificationError). */
  failed(route: string, error: unknown): VerificationError {
    this.telemetry.unexpectedFailure(route, error);
    return asVerificationError(error);
  }
}

/** Who a start's method figures count as a caller: the owner, else the client key. */
export function callerOf(owner: string | undefined, clientKey: string | undefined): string | undefined {
  if (owner !== undefined) return `owner:${owner}`;
  return clientKey === undefined ? undefined : `client:${clientKey}`;
}
